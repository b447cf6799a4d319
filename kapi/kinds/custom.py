"""Custom resources: ``ResourceType``s built from CustomResourceDefinition objects.

One type per served version of each established CRD. All versions of a CRD
share one storage (``group``/``plural``); conversion strategy ``None`` only
rewrites ``apiVersion`` on the way in and out. ``CustomResourceStrategy``
prunes, defaults and validates against the version's ``openAPIV3Schema``
(``jsonschema`` plus CEL rules), keeps status behind the ``/status``
subresource when the CRD has one, and prints ``additionalPrinterColumns``.
"""

from __future__ import annotations

import copy
import hashlib
import re
from datetime import UTC
from typing import Any

import orjson

from kapi import errors
from kapi.errors import Cause
from kapi.kinds.scale import ScalePaths
from kapi.registry.catalog import CustomTypeSource, version_priority
from kapi.registry.listtypes import list_type_causes
from kapi.registry.resource import DEFAULT_VERBS, ResourceType, Subresource
from kapi.registry.schemavalidation import schema_causes, validator_for_schema
from kapi.registry.strategy import (
    AGE_COLUMN,
    NAME_COLUMN,
    Column,
    Object,
    Strategy,
    human_duration,
    parse_time,
)
from kapi.registry.structural import apply_defaults, cel_causes, prune

__all__ = [
    "CUSTOM_RESOURCE_TYPES",
    "CustomResourceStrategy",
    "json_path_value",
    "types_for_crd",
]

_SEGMENT = re.compile(
    r"\.([^.\[]+)|\[(\d+)\]|\[\?\(@\.([\w.]+)==[\"']([^\"']*)[\"']\)\]"
)


def json_path_value(obj: Any, path: str) -> Any:
    """A kubectl JSONPath (``.spec.replicas``, ``.status.conditions[?(@.type=="Ready")].status``)."""
    text = path.strip()
    if text.startswith("{") and text.endswith("}"):
        text = text[1:-1]
    node = obj
    for match in _SEGMENT.finditer(text):
        key, index, filter_key, filter_value = match.groups()
        if key is not None:
            node = node.get(key) if isinstance(node, dict) else None
        elif index is not None:
            node = (
                node[int(index)]
                if isinstance(node, list) and int(index) < len(node)
                else None
            )
        else:
            found = None
            for item in node if isinstance(node, list) else ():
                value = item
                for part in filter_key.split("."):
                    value = value.get(part) if isinstance(value, dict) else None
                if str(value) == filter_value:
                    found = item
                    break
            node = found
        if node is None:
            return None
    return node


def _has_default(schema: Any) -> bool:
    if isinstance(schema, dict):
        return "default" in schema or any(_has_default(v) for v in schema.values())
    if isinstance(schema, list):
        return any(_has_default(v) for v in schema)
    return False


class CustomResourceStrategy(Strategy):
    def __init__(self, crd: Object, version: Object) -> None:
        spec = crd.get("spec") or {}
        self.crd_name = (crd.get("metadata") or {}).get("name", "")
        self.terminating = bool(
            (crd.get("metadata") or {}).get("deletionTimestamp")
        ) or any(
            c.get("type") == "Terminating" and c.get("status") == "True"
            for c in (crd.get("status") or {}).get("conditions") or ()
        )
        self.group = spec.get("group", "")
        self.storage_version = next(
            (v["name"] for v in spec.get("versions") or () if v.get("storage")),
            version["name"],
        )
        self.schema: dict = (version.get("schema") or {}).get("openAPIV3Schema") or {
            "type": "object"
        }
        self.validator = validator_for_schema(self.schema)
        # Only versions whose schema has a default cost anything on read.
        self.stored_schemas: dict[str, dict] = {
            v["name"]: schema
            for v in spec.get("versions") or ()
            if v.get("name")
            and (schema := (v.get("schema") or {}).get("openAPIV3Schema"))
            and _has_default(schema)
        }
        self._defaults_key = (
            hashlib.sha256(
                orjson.dumps(self.stored_schemas, option=orjson.OPT_SORT_KEYS)
            ).hexdigest()[:16]
            if self.stored_schemas
            else ""
        )
        subresources = version.get("subresources") or {}
        self.status_subresource = "status" in subresources
        scale = subresources.get("scale")
        self.scale = (
            ScalePaths(
                spec_replicas=scale.get("specReplicasPath", ".spec.replicas"),
                status_replicas=scale.get("statusReplicasPath", ".status.replicas"),
                label_selector=scale.get("labelSelectorPath") or "",
            )
            if scale is not None
            else None
        )
        # kube's serveDefaultColumnsIfEmpty: without columns, an Age date column.
        self.columns = list(version.get("additionalPrinterColumns") or ()) or [
            {
                "name": "Age",
                "type": "date",
                "description": AGE_COLUMN["description"],
                "jsonPath": ".metadata.creationTimestamp",
            }
        ]
        self.allow_create_on_update = False
        self.allow_unconditional_update = False

    # -- writes ------------------------------------------------------------------------
    def prune(self, obj: Object) -> list[str]:
        """Drop fields the schema does not describe; their paths. MUTATES ``obj``."""
        return prune(obj, self.schema, crd=True)

    def _shape(self, obj: Object) -> None:
        self.prune(obj)
        apply_defaults(obj, self.schema)

    def prepare_for_create(self, obj: Object) -> None:
        """Prune and default; with a status subresource, status starts empty. MUTATES."""
        if self.terminating:
            raise errors.StatusError(
                errors.status_failure(
                    405,
                    "MethodNotAllowed",
                    "create not allowed while custom resource definition is terminating",
                )
            )
        if self.status_subresource:
            obj.pop("status", None)
        self._shape(obj)

    def prepare_for_update(self, obj: Object, old: Object) -> None:
        super().prepare_for_update(obj, old)
        self._shape(obj)

    def prepare_for_status_update(self, obj: Object, old: Object) -> None:
        super().prepare_for_status_update(obj, old)
        self._shape(obj)

    @staticmethod
    def _rule_view(obj: Object) -> Object:
        """The object as rules see it: kube declares only ``metadata.name`` and
        ``metadata.generateName`` to CEL."""
        meta = obj.get("metadata") or {}
        return {
            **obj,
            "metadata": {k: meta[k] for k in ("name", "generateName") if k in meta},
        }

    def validate(self, obj: Object) -> list[Cause]:
        body = self._rule_view(obj)
        causes = schema_causes(self.validator, body)
        causes += list_type_causes(body, self.schema)
        return causes + cel_causes(body, None, self.schema)

    def validate_update(self, obj: Object, old: Object) -> list[Cause]:
        body = self._rule_view(obj)
        old_body = self._rule_view(old)
        causes = schema_causes(self.validator, body)
        causes += list_type_causes(body, self.schema)
        return causes + cel_causes(body, old_body, self.schema)

    # -- versions ------------------------------------------------------------------------
    def to_storage(self, obj: Object, version: str) -> Object:
        obj["apiVersion"] = f"{self.group}/{self.storage_version}"
        return obj

    def from_storage(self, obj: Object, version: str) -> Object:
        """Defaults of the version the object was stored in, as kube's storage
        decoder applies them (a default added later shows on read, is not
        written back), then the served apiVersion. MUTATES ``obj``."""
        stored = str(obj.get("apiVersion") or "").rpartition("/")[2]
        schema = self.stored_schemas.get(stored)
        if schema is not None:
            apply_defaults(obj, schema)
        obj["apiVersion"] = f"{self.group}/{version}"
        return obj

    def conversion_key(self, version: str) -> str:
        """Changes with the defaults ``from_storage`` applies."""
        return self._defaults_key

    def serves_stored_form(self, version: str) -> bool:
        # Stored objects keep the apiVersion of the storage version they were
        # written in, which may not be today's: the served one is always set.
        return False

    # -- tables ----------------------------------------------------------------------------
    def table_definition(self) -> list[Column]:
        return [
            NAME_COLUMN,
            *(
                Column(
                    c.get("name", ""),
                    type=c.get("type", "string"),
                    description=c.get("description", ""),
                    priority=int(c.get("priority") or 0),
                    format=c.get("format", ""),
                )
                for c in self.columns
            ),
        ]

    def table_row_cells(self, obj: Object) -> list[Any]:
        name = (obj.get("metadata") or {}).get("name", "")
        cells: list[Any] = [name]
        for column in self.columns:
            value = json_path_value(obj, column.get("jsonPath", ""))
            if column.get("type") == "date" and isinstance(value, str):
                when = parse_time(value)
                if when is not None:
                    from datetime import datetime

                    value = human_duration((datetime.now(UTC) - when).total_seconds())
            elif isinstance(value, (dict, list)):
                value = orjson.dumps(value).decode()
            cells.append(value)
        return cells


def _published_schema(schema: dict) -> dict:
    """The version's schema with the fields every object has (apiVersion, kind,
    metadata), as ``schema_for`` and OpenAPI consumers expect."""
    out = copy.deepcopy(schema)
    props = out.setdefault("properties", {})
    props.setdefault("apiVersion", {"type": "string"})
    props.setdefault("kind", {"type": "string"})
    props["metadata"] = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    return out


def types_for_crd(crd: Object) -> list[ResourceType]:
    """The served ``ResourceType``s of one CRD (none until it is established)."""
    spec = crd.get("spec") or {}
    # Served under the names the naming decision accepted (kube's crdHandler).
    names = (crd.get("status") or {}).get("acceptedNames") or spec.get("names") or {}
    conditions = {
        c.get("type"): c.get("status")
        for c in (crd.get("status") or {}).get("conditions") or ()
    }
    if (
        conditions.get("Established") != "True"
        or not names.get("plural")
        or not names.get("kind")
    ):
        return []
    out = []
    for version in spec.get("versions") or ():
        if not version.get("served"):
            continue
        strategy = CustomResourceStrategy(crd, version)
        subresources = []
        if strategy.status_subresource:
            subresources.append(Subresource("status", names["kind"]))
        if strategy.scale is not None:
            subresources.append(
                Subresource("scale", "Scale", group="autoscaling", version="v1")
            )
        selectable = tuple(
            f["jsonPath"].lstrip(".")
            for f in version.get("selectableFields") or ()
            if f.get("jsonPath")
        )
        out.append(
            ResourceType(
                group=spec["group"],
                version=version["name"],
                kind=names["kind"],
                plural=names["plural"],
                singular=names.get("singular") or names["kind"].lower(),
                namespaced=spec.get("scope") == "Namespaced",
                strategy=strategy,
                short_names=tuple(names.get("shortNames") or ()),
                categories=tuple(names.get("categories") or ()),
                verbs=DEFAULT_VERBS,
                subresources=tuple(subresources),
                field_selectors=selectable,
                storage_group=spec["group"],
                storage_resource=names["plural"],
                extra={
                    "crd": strategy.crd_name,
                    "openapi_schema": _published_schema(strategy.schema),
                    "crd_schema": strategy.schema,
                    "list_kind": names.get("listKind") or f"{names['kind']}List",
                    "deprecation_warning": _deprecation_warning(spec, version, names["kind"]),
                },
            )
        )
    return out


def _deprecation_warning(spec: Object, version: Object, kind: str) -> str | None:
    """What a request to a deprecated version is warned with: the CRD's
    ``deprecationWarning``, else kube's defaultDeprecationWarning
    (``GROUP/VERSION KIND is deprecated; use GROUP/NEWER KIND``, naming the most
    preferred served version newer than this one, if any)."""
    if not version.get("deprecated"):
        return None
    if version.get("deprecationWarning"):
        return version["deprecationWarning"]
    group, name = spec["group"], version["name"]
    message = f"{group}/{name} {kind} is deprecated"
    newer = sorted(
        (
            v["name"]
            for v in spec.get("versions") or ()
            if v.get("served")
            and not v.get("deprecated")
            and version_priority(v["name"]) < version_priority(name)
        ),
        key=version_priority,
    )
    if newer:
        message += f"; use {group}/{newer[0]} {kind}"
    return message


#: What the catalog serves custom resources from (``KAPI_CUSTOM_RESOURCE_TYPES``):
#: the types of every stored CustomResourceDefinition.
CUSTOM_RESOURCE_TYPES = CustomTypeSource(
    "apiextensions.k8s.io", "customresourcedefinitions", types_for_crd
)
