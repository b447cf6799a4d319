"""ObjectMeta validation on create and update.

Port of apimachinery ``pkg/api/validation/objectmeta.go`` (plus the core-API
finalizer rule from kubernetes ``pkg/apis/core/validation``) over plain dicts:
``metadata`` as it arrives in a request body. Both functions only read their
arguments and return ``list[Cause]`` in kube's order with kube's field paths
(``metadata.name``, ``metadata.labels``, ``metadata.ownerReferences[0].uid``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kapi.errors import Cause
from kapi.validation.field import forbidden, invalid, not_supported, required, too_long
from kapi.validation.names import (
    NAME_RULES,
    is_qualified_name,
    is_valid_label_value,
    name_is_dns_label,
)

__all__ = [
    "FIELD_IMMUTABLE",
    "STANDARD_FINALIZERS",
    "TOTAL_ANNOTATION_SIZE_LIMIT",
    "validate_annotations",
    "validate_finalizers",
    "validate_labels",
    "validate_managed_fields",
    "validate_object_meta",
    "validate_object_meta_update",
    "validate_owner_references",
]

FIELD_IMMUTABLE = "field is immutable"
TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024
FIELD_MANAGER_MAX_LENGTH = 128
MAX_SUBRESOURCE_NAME_LENGTH = 256
FINALIZER_ORPHAN = "orphan"
FINALIZER_FOREGROUND = "foregroundDeletion"
STANDARD_FINALIZERS = frozenset({"kubernetes", FINALIZER_ORPHAN, FINALIZER_FOREGROUND})
# Owners kube refuses (an Event must never keep anything alive).
_BANNED_OWNERS = frozenset({("", "v1", "Event")})
_OWNER_REF_KEYS = (
    "apiVersion",
    "kind",
    "name",
    "uid",
    "controller",
    "blockOwnerDeletion",
)

_M = "metadata"


def _str(meta: Mapping[str, Any], key: str) -> str:
    value = meta.get(key)
    return value if isinstance(value, str) else ""


def validate_labels(
    labels: Mapping[str, Any] | None, field: str = f"{_M}.labels"
) -> list[Cause]:
    causes: list[Cause] = []
    for k, v in (labels or {}).items():
        causes += [invalid(field, k, msg) for msg in is_qualified_name(k)]
        causes += [
            invalid(field, v, msg)
            for msg in is_valid_label_value(v if isinstance(v, str) else str(v))
        ]
    return causes


def validate_annotations(
    annotations: Mapping[str, Any] | None, field: str = f"{_M}.annotations"
) -> list[Cause]:
    causes: list[Cause] = []
    total = 0
    for k, v in (annotations or {}).items():
        # Annotation keys are qualified names except that case does not matter.
        causes += [invalid(field, k, msg) for msg in is_qualified_name(k.lower())]
        total += len(k.encode()) + len(str(v).encode())
    if total > TOTAL_ANNOTATION_SIZE_LIMIT:
        causes.append(too_long(field, TOTAL_ANNOTATION_SIZE_LIMIT))
    return causes


def _parse_group_version(api_version: str) -> tuple[str, str] | None:
    """``schema.ParseGroupVersion``: ``v1`` or ``group/v1``; None when malformed."""
    if api_version in ("", "/"):
        return "", ""
    parts = api_version.split("/")
    if len(parts) == 1:
        return "", parts[0]
    if len(parts) == 2:
        return parts[0], parts[1]
    return None


def _owner_ref_value(ref: Mapping[str, Any]) -> dict[str, Any]:
    # Go marshals OwnerReference in struct order and omits unset pointers.
    return {k: ref[k] for k in _OWNER_REF_KEYS if k in ref and ref[k] is not None}


def validate_owner_references(
    refs: list[Any] | None, field: str = f"{_M}.ownerReferences"
) -> list[Cause]:
    causes: list[Cause] = []
    first_controller = ""
    for i, ref in enumerate(refs or []):
        path = f"{field}[{i}]"
        if not isinstance(ref, Mapping):
            causes.append(invalid(path, ref, "must be an object"))
            continue
        api_version = _str(ref, "apiVersion")
        gv = _parse_group_version(api_version)
        if not api_version:
            causes.append(required(f"{path}.apiVersion", "must not be empty"))
        elif gv is None or not gv[1]:
            causes.append(
                invalid(
                    f"{path}.apiVersion",
                    api_version,
                    "must be <group>/<version> or <version>",
                )
            )
        for name in ("kind", "name", "uid"):
            if not _str(ref, name):
                causes.append(required(f"{path}.{name}", "must not be empty"))
        group, version = gv or ("", "")
        kind = _str(ref, "kind")
        if (group, version, kind) in _BANNED_OWNERS:
            causes.append(
                invalid(
                    path,
                    _owner_ref_value(ref),
                    f"{group}/{version}, Kind={kind} is disallowed from being an owner",
                )
            )
        if ref.get("controller") is True:
            current = f"{kind}/{_str(ref, 'name')}"
            if first_controller:
                causes.append(
                    invalid(
                        field,
                        [
                            _owner_ref_value(r) if isinstance(r, Mapping) else r
                            for r in refs or []
                        ],
                        "Only one reference can have Controller set to true. "
                        f'Found "true" in references for {first_controller} and {current}',
                    )
                )
            else:
                first_controller = current
    return causes


def validate_finalizers(
    finalizers: list[Any] | None, field: str = f"{_M}.finalizers", *, core: bool = True
) -> list[Cause]:
    """Qualified names, not both ``orphan`` and ``foregroundDeletion``.

    ``core=True`` adds the built-in API rule that an unprefixed finalizer must
    be a standard one (``kubernetes``, ``orphan``, ``foregroundDeletion``);
    custom resources are validated without it, as kube does.
    """
    causes: list[Cause] = []
    names = [f if isinstance(f, str) else str(f) for f in finalizers or []]
    for name in names:
        causes += [invalid(field, name, msg) for msg in is_qualified_name(name)]
    if FINALIZER_ORPHAN in names and FINALIZER_FOREGROUND in names:
        causes.append(
            invalid(
                field,
                names,
                f"finalizer {FINALIZER_ORPHAN} and {FINALIZER_FOREGROUND} cannot be both set",
            )
        )
    if core:
        causes += _validate_core_finalizers(names, field)
    return causes


def _validate_core_finalizers(names: list[str], field: str) -> list[Cause]:
    causes: list[Cause] = []
    for i, name in enumerate(names):
        path = f"{field}[{i}]"
        causes += [invalid(path, name, msg) for msg in is_qualified_name(name)]
        if "/" not in name and name not in STANDARD_FINALIZERS:
            causes.append(
                invalid(
                    path,
                    name,
                    "name is neither a standard finalizer name nor is it fully qualified",
                )
            )
    return causes


def _go_rune(ch: str) -> str:
    # Go's %#U: U+0007, followed by the quoted character when printable.
    code = f"U+{ord(ch):04X}"
    return f"{code} '{ch}'" if ch.isprintable() else code


def validate_managed_fields(
    entries: list[Any] | None, field: str = f"{_M}.managedFields"
) -> list[Cause]:
    causes: list[Cause] = []
    for i, entry in enumerate(entries or []):
        path = f"{field}[{i}]"
        if not isinstance(entry, Mapping):
            causes.append(invalid(path, entry, "must be an object"))
            continue
        operation = _str(entry, "operation")
        if not operation:
            causes.append(required(f"{path}.operation", "must not be empty"))
        elif operation not in ("Apply", "Update"):
            causes.append(
                not_supported(f"{path}.operation", operation, ["Apply", "Update"])
            )
        fields_type = _str(entry, "fieldsType")
        if fields_type and fields_type != "FieldsV1":
            causes.append(
                invalid(f"{path}.fieldsType", fields_type, "must be `FieldsV1`")
            )
        manager = _str(entry, "manager")
        if len(manager.encode()) > FIELD_MANAGER_MAX_LENGTH:
            causes.append(too_long(f"{path}.manager", FIELD_MANAGER_MAX_LENGTH))
        position = 0
        for ch in manager:
            if not ch.isprintable():
                causes.append(
                    invalid(
                        f"{path}.manager",
                        manager,
                        f"invalid character {_go_rune(ch)} (at position {position})",
                    )
                )
            position += len(ch.encode())
        if len(_str(entry, "subresource").encode()) > MAX_SUBRESOURCE_NAME_LENGTH:
            causes.append(too_long(f"{path}.subresource", MAX_SUBRESOURCE_NAME_LENGTH))
    return causes


def _validate_generation(meta: Mapping[str, Any]) -> list[Cause]:
    generation = meta.get("generation")
    if (
        isinstance(generation, int)
        and not isinstance(generation, bool)
        and generation < 0
    ):
        return [
            invalid(
                f"{_M}.generation", generation, "must be greater than or equal to 0"
            )
        ]
    return []


def validate_object_meta(
    meta: Mapping[str, Any] | None,
    *,
    namespaced: bool,
    name_rule: str,
    core_finalizers: bool = True,
) -> list[Cause]:
    """Validate ``metadata`` of an object being created.

    ``name_rule`` is ``subdomain``, ``label`` or ``path-segment`` (see
    ``kapi.validation.names``). Call after generateName has been expanded, as
    kube does: a bare generateName is reported as a missing name.
    """
    meta = meta or {}
    check_name = NAME_RULES[name_rule]
    causes: list[Cause] = []
    generate_name = _str(meta, "generateName")
    if generate_name:
        causes += [
            invalid(f"{_M}.generateName", generate_name, msg)
            for msg in check_name(generate_name, True)
        ]
    name = _str(meta, "name")
    if not name:
        causes.append(required(f"{_M}.name", "name or generateName is required"))
    else:
        causes += [invalid(f"{_M}.name", name, msg) for msg in check_name(name, False)]

    namespace = _str(meta, "namespace")
    if namespaced:
        if not namespace:
            causes.append(required(f"{_M}.namespace"))
        else:
            causes += [
                invalid(f"{_M}.namespace", namespace, msg)
                for msg in name_is_dns_label(namespace)
            ]
    elif namespace:
        causes.append(forbidden(f"{_M}.namespace", "not allowed on this type"))

    causes += _validate_generation(meta)
    causes += validate_labels(meta.get("labels"))
    causes += validate_annotations(meta.get("annotations"))
    causes += validate_owner_references(meta.get("ownerReferences"))
    causes += validate_finalizers(meta.get("finalizers"), core=False)
    causes += validate_managed_fields(meta.get("managedFields"))
    if core_finalizers:
        causes += _validate_core_finalizers(
            [f if isinstance(f, str) else str(f) for f in meta.get("finalizers") or []],
            f"{_M}.finalizers",
        )
    return causes


def _immutable(new: Mapping[str, Any], old: Mapping[str, Any], key: str) -> list[Cause]:
    # Absent and empty are the same value in Go's typed ObjectMeta.
    new_value, old_value = new.get(key) or None, old.get(key) or None
    if new_value != old_value:
        shown = new.get(key)
        if shown is None and key in ("name", "namespace", "uid"):
            shown = ""
        return [invalid(f"{_M}.{key}", shown, FIELD_IMMUTABLE)]
    return []


def _go_string_slice(values: list[str]) -> str:
    # Go's %#v of a []string, which kube uses in the no-new-finalizers message.
    return "[]string{" + ", ".join(f'"{v}"' for v in values) + "}"


def validate_object_meta_update(
    new: Mapping[str, Any] | None,
    old: Mapping[str, Any] | None,
    *,
    core_finalizers: bool = True,
) -> list[Cause]:
    """Validate ``metadata`` of an update against the stored object's.

    Name, namespace, uid, creationTimestamp, deletionTimestamp and
    deletionGracePeriodSeconds are immutable; generateName is not (kube lets
    it change). Syntax of name and namespace is not re-checked: they cannot
    change.
    """
    new, old = new or {}, old or {}
    causes: list[Cause] = []
    if old.get("deletionTimestamp"):
        old_finalizers = set(old.get("finalizers") or [])
        extra = sorted(
            {f for f in new.get("finalizers") or [] if f not in old_finalizers}
        )
        if extra:
            causes.append(
                forbidden(
                    f"{_M}.finalizers",
                    "no new finalizers can be added if the object is being deleted, "
                    f"found new finalizers {_go_string_slice(extra)}",
                )
            )
    if not _str(new, "resourceVersion"):
        causes.append(
            invalid(
                f"{_M}.resourceVersion",
                _str(new, "resourceVersion"),
                "must be specified for an update",
            )
        )
    causes += _validate_generation(new)
    new_gen, old_gen = new.get("generation") or 0, old.get("generation") or 0
    if isinstance(new_gen, int) and isinstance(old_gen, int) and new_gen < old_gen:
        causes.append(invalid(f"{_M}.generation", new_gen, "must not be decremented"))
    for key in (
        "name",
        "namespace",
        "uid",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
    ):
        causes += _immutable(new, old, key)
    causes += validate_labels(new.get("labels"))
    causes += validate_annotations(new.get("annotations"))
    causes += validate_owner_references(new.get("ownerReferences"))
    causes += validate_managed_fields(new.get("managedFields"))
    if core_finalizers:
        causes += _validate_core_finalizers(
            [f if isinstance(f, str) else str(f) for f in new.get("finalizers") or []],
            f"{_M}.finalizers",
        )
    return causes
