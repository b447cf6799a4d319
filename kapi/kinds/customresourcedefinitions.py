"""CustomResourceDefinition: validation of the definition and its status.

A CRD is refused (422 with kube's field paths) unless its names, scope and
versions are consistent and every version's ``openAPIV3Schema`` is structural
with CEL rules that compile. An accepted CRD is served at once, so the strategy
writes ``NamesAccepted`` and ``Established`` itself (there is no separate
controller to wait for) and adds the ``customresourcecleanup.apiextensions.k8s.io``
finalizer that the workers run on delete (``kapi.kinds.crdcleanup``).
"""

from __future__ import annotations

import re
from typing import Any

from kapi.cel.fieldpath import field_path_target
from kapi.clock import now_rfc3339
from kapi.errors import Cause
from kapi.kinds.crdnames import all_crds, calculate_names, claimed_names
from kapi.registry.strategy import Column, Object, Strategy
from kapi.registry.structural import compile_rules, structural_causes
from kapi.validation.field import invalid
from kapi.validation.names import is_dns1035_label

__all__ = ["CLEANUP_FINALIZER", "CustomResourceDefinitionStrategy"]

CLEANUP_FINALIZER = "customresourcecleanup.apiextensions.k8s.io"
_DNS_SUBDOMAIN = re.compile(
    r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
)


def _names_causes(names: dict[str, Any], at: str) -> list[Cause]:
    """kube's ``ValidateCustomResourceDefinitionNames``: DNS-1035 labels, kinds
    once lower-cased (so ``e2e-test-crd`` is a valid kind)."""
    causes: list[Cause] = []
    for key in ("plural", "singular", "kind", "listKind"):
        value = names.get(key)
        if not value or not isinstance(value, str):
            continue
        errs = is_dns1035_label(value.lower() if "ind" in key else value)
        if errs and "ind" in key:
            errs = ["may have mixed case, but should otherwise match: " + ",".join(errs)]
        if errs:
            causes.append(invalid(f"{at}.{key}", value, ",".join(errs)))
    for key in ("shortNames", "categories"):
        for index, value in enumerate(names.get(key) or ()):
            errs = is_dns1035_label(str(value))
            if errs:
                causes.append(invalid(f"{at}.{key}[{index}]", value, ",".join(errs)))
    kind = names.get("kind")
    if kind and kind == names.get("listKind"):
        causes.append(
            invalid(f"{at}.listKind", kind, "kind and listKind may not be the same")
        )
    return causes


def _set_condition(
    conditions: list[dict[str, Any]],
    previous: dict[str, dict[str, Any]],
    kind: str,
    status: str,
    reason: str,
    message: str,
) -> None:
    """kube's ``SetCRDCondition``: the transition time moves only with the status."""
    before = previous.get(kind)
    since = (
        before["lastTransitionTime"]
        if before and before.get("status") == status and before.get("lastTransitionTime")
        else now_rfc3339()
    )
    conditions.append(
        {
            "type": kind,
            "status": status,
            "lastTransitionTime": since,
            "reason": reason,
            "message": message,
        }
    )


def _status(obj: Object, old_status: dict[str, Any]) -> dict[str, Any]:
    """Accepted names, ``NamesAccepted``/``Established`` (kube's naming and
    establishing controllers, run at write time) and stored versions."""
    spec = obj.get("spec") or {}
    requested = dict(spec.get("names") or {})
    requested.setdefault("singular", str(requested.get("kind", "")).lower())
    requested.setdefault("listKind", f"{requested.get('kind', '')}List")
    used = claimed_names(
        all_crds(), spec.get("group") or "", (obj.get("metadata") or {}).get("name", "")
    )
    names = calculate_names(requested, old_status.get("acceptedNames") or {}, used)
    previous = {c.get("type"): c for c in old_status.get("conditions") or ()}
    conditions: list[dict[str, Any]] = []
    _set_condition(
        conditions, previous, "NamesAccepted", names.status, names.reason, names.message
    )
    established = previous.get("Established")
    if established and established.get("status") == "True":
        conditions.append(established)
    elif names.status == "True":
        _set_condition(
            conditions,
            previous,
            "Established",
            "True",
            "InitialNamesAccepted",
            "the initial names have been accepted",
        )
    else:
        _set_condition(
            conditions,
            previous,
            "Established",
            "False",
            "NotAccepted",
            "not all names are accepted",
        )
    conditions += [
        c
        for kind, c in previous.items()
        if kind not in ("NamesAccepted", "Established")
    ]
    stored = list(old_status.get("storedVersions") or [])
    for version in spec.get("versions") or ():
        if version.get("storage") and version.get("name") not in stored:
            stored.append(version["name"])
    return {
        "conditions": conditions,
        "acceptedNames": names.accepted,
        "storedVersions": stored,
    }


def _defaults(obj: Object) -> None:
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    names = spec.get("names")
    if isinstance(names, dict) and names.get("kind"):
        names.setdefault("singular", names["kind"].lower())
        names.setdefault("listKind", f"{names['kind']}List")
    spec.setdefault("conversion", {"strategy": "None"})


_MAX_SELECTABLE_FIELDS = 8


def _selectable_fields(fields: list, schema: dict, at: str) -> list[Cause]:
    """kube's ``validateSelectableFields``: at most 8, each a distinct path to a
    string, integer or boolean field outside metadata."""
    causes: list[Cause] = []
    if len(fields) > _MAX_SELECTABLE_FIELDS:
        causes.append(
            Cause(
                "FieldValueTooMany",
                f"Too many: {len(fields)}: must have at most {_MAX_SELECTABLE_FIELDS} items",
                at,
            )
        )
    seen: set[str] = set()
    for index, entry in enumerate(fields):
        where = f"{at}[{index}].jsonPath"
        path = entry.get("jsonPath") if isinstance(entry, dict) else None
        if not path:
            causes.append(Cause("FieldValueRequired", "Required value", where))
            continue
        found = field_path_target(path, schema)
        if found is None:
            first = re.split(r"[.\[\]]", path.lstrip(".["), maxsplit=1)[0]
            detail = (
                "does not refer to a valid field"
                if path.startswith((".", "["))
                else f"expected [ or . but got: {first}"
            )
            causes.append(
                Cause(
                    "FieldValueInvalid",
                    f'Invalid value: "{path}": is an invalid path: {detail}',
                    where,
                )
            )
            continue
        resolved, target = found
        if resolved.split(".")[0].split("[")[0] == "metadata":
            causes.append(
                Cause(
                    "FieldValueInvalid",
                    f'Invalid value: "{path}": must not point to fields in metadata',
                    where,
                )
            )
        if target.get("type") not in ("string", "integer", "boolean"):
            causes.append(
                Cause(
                    "FieldValueInvalid",
                    f'Invalid value: "{path}": must point to a field of type string, '
                    "boolean or integer. Enum string fields and strings with formats "
                    "are allowed.",
                    where,
                )
            )
        if resolved in seen:
            causes.append(
                Cause("FieldValueDuplicate", f'Duplicate value: "{path}"', where)
            )
        seen.add(resolved)
    return causes


def _ratchet_rules(causes: list[Cause], spec: dict, old_spec: dict) -> list[Cause]:
    """Rules a version already had keep being accepted (kube ratchets CEL
    compilation and cost checks on update): drop causes about the rules of a
    version whose schema is unchanged, so status writes and unrelated edits of
    a CRD stored under older checks still go through."""
    old_schemas = {
        v.get("name"): (v.get("schema") or {}).get("openAPIV3Schema")
        for v in old_spec.get("versions") or ()
    }
    unchanged = {
        f"spec.versions[{i}].schema.openAPIV3Schema"
        for i, v in enumerate(spec.get("versions") or ())
        if (v.get("schema") or {}).get("openAPIV3Schema") == old_schemas.get(v.get("name"))
    }

    def ratcheted(cause: Cause) -> bool:
        return any(
            cause.field == prefix
            or (cause.field.startswith(prefix) and "x-kubernetes-validations" in cause.field)
            for prefix in unchanged
        )

    return [c for c in causes if not ratcheted(c)]


class CustomResourceDefinitionStrategy(Strategy):
    status_subresource = True
    #: Names are first come, first served: two CRDs claiming one name at the same
    #: moment (in two processes) must not both see it free. kube gets this from
    #: running one naming controller; here the writes take turns.
    serialize_writes = True

    def prepare_for_create(self, obj: Object) -> None:
        """Default names and conversion, add the cleanup finalizer, accept the names
        and establish. MUTATES ``obj``."""
        _defaults(obj)
        finalizers = obj["metadata"].setdefault("finalizers", [])
        if CLEANUP_FINALIZER not in finalizers:
            finalizers.append(CLEANUP_FINALIZER)
        obj["status"] = _status(obj, {})

    def prepare_for_update(self, obj: Object, old: Object) -> None:
        """Keep status but refresh names and stored versions. MUTATES ``obj``."""
        super().prepare_for_update(obj, old)
        _defaults(obj)
        obj["status"] = _status(obj, old.get("status") or {})

    def prepare_for_status_update(self, obj: Object, old: Object) -> None:
        """Only status changes; a condition's ``type`` and ``status`` decode to
        ``""`` when absent, as into kube's Go struct (kube's status validation
        checks only the accepted names). The names and ``Established`` are then
        decided again, as kube's naming and establishing controllers would right
        after the write, so the CRD stays served. MUTATES ``obj``."""
        super().prepare_for_status_update(obj, old)
        status = obj.get("status")
        if not isinstance(status, dict):
            status = {}
        conditions = status.get("conditions") or []
        names = status.get("acceptedNames") or {}
        if not isinstance(conditions, list) or not isinstance(names, dict):
            return  # mistyped: the schema check refuses it
        if not all(isinstance(c, dict) for c in conditions):
            return
        for condition in conditions:
            condition.setdefault("type", "")
            condition.setdefault("status", "")
        obj["status"] = _status(obj, status)

    def prepare_for_graceful_delete(self, obj: Object) -> None:
        """``Terminating`` while the cleanup finalizer deletes the custom resources
        (kube's finalizer controller); creates of new ones are refused. MUTATES."""
        if CLEANUP_FINALIZER not in (obj["metadata"].get("finalizers") or ()):
            return
        status = obj.setdefault("status", {})
        conditions = [
            c for c in status.get("conditions") or () if c.get("type") != "Terminating"
        ]
        _set_condition(
            conditions,
            {},
            "Terminating",
            "True",
            "InstanceDeletionInProgress",
            "CustomResource deletion is in progress",
        )
        status["conditions"] = conditions

    def validate(self, obj: Object) -> list[Cause]:
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            return [Cause("FieldValueRequired", "Required value", "spec")]
        causes: list[Cause] = []
        group = spec.get("group") or ""
        names = spec.get("names") or {}
        plural = names.get("plural") or ""
        if not group:
            causes.append(Cause("FieldValueRequired", "Required value", "spec.group"))
        elif not _DNS_SUBDOMAIN.match(group) or "." not in group:
            causes.append(
                Cause(
                    "FieldValueInvalid",
                    f'Invalid value: "{group}": should be a domain with at least one dot',
                    "spec.group",
                )
            )
        name = (obj.get("metadata") or {}).get("name", "")
        if plural and group and name != f"{plural}.{group}":
            causes.append(
                Cause(
                    "FieldValueInvalid",
                    f'Invalid value: "{name}": must be spec.names.plural+"."+spec.group',
                    "metadata.name",
                )
            )
        if not plural:
            causes.append(
                Cause("FieldValueRequired", "Required value", "spec.names.plural")
            )
        if not names.get("kind"):
            causes.append(Cause("FieldValueRequired", "Required value", "spec.names.kind"))
        causes += _names_causes(names, "spec.names")
        scope = spec.get("scope")
        if scope not in ("Namespaced", "Cluster"):
            causes.append(
                Cause(
                    "FieldValueNotSupported",
                    f'Unsupported value: "{scope or ""}": supported values: "Cluster", "Namespaced"',
                    "spec.scope",
                )
            )
        strategy = (spec.get("conversion") or {}).get("strategy", "None")
        if strategy != "None":
            causes.append(
                Cause(
                    "FieldValueNotSupported",
                    f'Unsupported value: "{strategy}": supported values: "None"',
                    "spec.conversion.strategy",
                )
            )
        causes += self._versions(spec.get("versions"))
        return causes

    def _versions(self, versions: Any) -> list[Cause]:
        if not versions:
            return [
                Cause(
                    "FieldValueInvalid",
                    "Invalid value: []apiextensions.CustomResourceDefinitionVersion(nil): must have exactly one version marked as storage version",
                    "spec.versions",
                )
            ]
        causes: list[Cause] = []
        seen: set[str] = set()
        storage = 0
        for index, version in enumerate(versions):
            at = f"spec.versions[{index}]"
            name = version.get("name") or ""
            if not name:
                causes.append(
                    Cause("FieldValueRequired", "Required value", f"{at}.name")
                )
            else:
                causes += [
                    invalid(f"{at}.name", name, msg) for msg in is_dns1035_label(name)
                ]
            if name in seen:
                causes.append(
                    Cause(
                        "FieldValueDuplicate",
                        f'Duplicate value: "{name}"',
                        f"{at}.name",
                    )
                )
            seen.add(name)
            storage += 1 if version.get("storage") else 0
            schema = (version.get("schema") or {}).get("openAPIV3Schema")
            path = f"{at}.schema.openAPIV3Schema"
            if schema is None:
                causes.append(
                    Cause(
                        "FieldValueRequired",
                        "Required value: schemas are required",
                        path,
                    )
                )
                continue
            causes += structural_causes(schema, path)
            causes += compile_rules(schema, path)
            causes += _selectable_fields(
                version.get("selectableFields") or [], schema, f"{at}.selectableFields"
            )
            scale = (version.get("subresources") or {}).get("scale")
            if scale is not None:
                for key in ("specReplicasPath", "statusReplicasPath"):
                    if not str(scale.get(key) or "").startswith(
                        ".spec" if key == "specReplicasPath" else ".status"
                    ):
                        causes.append(
                            Cause(
                                "FieldValueInvalid",
                                f'Invalid value: "{scale.get(key, "")}": should be a json path under .{"spec" if key == "specReplicasPath" else "status"}',
                                f"{at}.subresources.scale.{key}",
                            )
                        )
            for col_index, column in enumerate(
                version.get("additionalPrinterColumns") or ()
            ):
                cat = f"{at}.additionalPrinterColumns[{col_index}]"
                if not column.get("name"):
                    causes.append(
                        Cause("FieldValueRequired", "Required value", f"{cat}.name")
                    )
                if not column.get("jsonPath"):
                    causes.append(
                        Cause("FieldValueRequired", "Required value", f"{cat}.jsonPath")
                    )
                if column.get("type") not in (
                    "integer",
                    "number",
                    "string",
                    "boolean",
                    "date",
                ):
                    causes.append(
                        Cause(
                            "FieldValueNotSupported",
                            f'Unsupported value: "{column.get("type", "")}": supported values: "boolean", "date", "integer", "number", "string"',
                            f"{cat}.type",
                        )
                    )
        if storage != 1:
            causes.append(
                Cause(
                    "FieldValueInvalid",
                    "Invalid value: []apiextensions.CustomResourceDefinitionVersion{...}: must have exactly one version marked as storage version",
                    "spec.versions",
                )
            )
        return causes

    def validate_update(self, obj: Object, old: Object) -> list[Cause]:
        spec, old_spec = obj.get("spec") or {}, old.get("spec") or {}
        causes = _ratchet_rules(self.validate(obj), spec, old_spec)
        if spec.get("group") != old_spec.get("group"):
            causes.append(
                Cause(
                    "FieldValueInvalid",
                    f'Invalid value: "{spec.get("group")}": field is immutable',
                    "spec.group",
                )
            )
        if (spec.get("names") or {}).get("plural") != (old_spec.get("names") or {}).get(
            "plural"
        ):
            causes.append(
                Cause(
                    "FieldValueInvalid",
                    "Invalid value: field is immutable",
                    "spec.names.plural",
                )
            )
        return causes

    def table_definition(self) -> list[Column]:
        return [
            super().table_definition()[0],
            Column(
                "Created At",
                type="date",
                description="CreationTimestamp is a timestamp representing the server time when this object was created.",
            ),
        ]

    def table_row_cells(self, obj: Object) -> list[Any]:
        meta = obj.get("metadata") or {}
        return [meta.get("name", ""), meta.get("creationTimestamp", "")]
