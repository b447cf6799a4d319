"""Decode query parameters into registry options, refusing bad ones as kube does."""

from __future__ import annotations

from kapi import errors
from kapi.errors import Cause
from kapi.fieldmanager import manager_or_user_agent
from kapi.handlers.scope import RequestScope
from kapi.registry.options import (
    CreateOptions,
    DeleteOptions,
    PatchOptions,
    UpdateOptions,
)
from kapi.storage.interface import Preconditions

__all__ = [
    "create_options",
    "delete_options",
    "invalid_options",
    "parse_bool",
    "parse_int",
    "patch_options",
    "update_options",
]

_FIELD_VALIDATION = ("Ignore", "Warn", "Strict")


def invalid_options(kind: str, causes: list[Cause]) -> errors.StatusError:
    """422 Invalid on the options object, as kube words it
    (``ListOptions.meta.k8s.io "" is invalid: ...``)."""
    return errors.invalid("meta.k8s.io", kind, "", causes)


def parse_bool(scope: RequestScope, name: str) -> bool | None:
    value = scope.param(name)
    if value is None:
        return None
    lowered = value.lower()
    if lowered in ("", "true", "1", "t", "yes", "y"):
        return True
    if lowered in ("false", "0", "f", "no", "n"):
        return False
    raise errors.bad_request(f'invalid boolean value for {name}: "{value}"')


def parse_int(scope: RequestScope, name: str) -> int | None:
    value = scope.param(name)
    if value is None or value == "":
        return None
    try:
        return int(value)
    except ValueError:
        raise errors.bad_request(f'invalid value for {name}: "{value}": must be an integer') from None


def _dry_run(scope: RequestScope, kind: str) -> bool:
    values = scope.params("dryRun")
    if not scope.has("dryRun"):
        return False
    causes = [
        Cause("FieldValueNotSupported", f'Unsupported value: "{v}": supported values: "All"', "dryRun")
        for v in values
        if v != "All"
    ]
    if causes or not values:
        raise invalid_options(kind, causes or [Cause("FieldValueNotSupported", 'Unsupported value: "": supported values: "All"', "dryRun")])
    return True


def _field_manager(scope: RequestScope, kind: str) -> str:
    manager = scope.param("fieldManager") or ""
    if len(manager) > 128:
        raise invalid_options(
            kind, [Cause("FieldValueTooLong", "Too long: must have at most 128 bytes", "fieldManager")]
        )
    if any(not (0x20 <= ord(c) < 0x7F) for c in manager):
        raise invalid_options(
            kind,
            [Cause("FieldValueInvalid", f'Invalid value: "{manager}": must only contain printable characters', "fieldManager")],
        )
    return manager


def _field_validation(scope: RequestScope, kind: str) -> str:
    """kube's ValidateFieldValidation: exactly one of the three, or empty (Warn)."""
    value = scope.param("fieldValidation")
    if value is None or value == "":
        return "Warn"
    if value in _FIELD_VALIDATION:
        return value
    supported = ", ".join(f'"{v}"' for v in ("", *sorted(_FIELD_VALIDATION)))
    raise invalid_options(
        kind,
        [
            Cause(
                "FieldValueNotSupported",
                f'Unsupported value: "{value}": supported values: {supported}',
                "fieldValidation",
            )
        ],
    )


def create_options(scope: RequestScope) -> CreateOptions:
    return CreateOptions(
        dry_run=_dry_run(scope, "CreateOptions"),
        field_manager=manager_or_user_agent(_field_manager(scope, "CreateOptions"), scope.user_agent),
        field_validation=_field_validation(scope, "CreateOptions"),
    )


def update_options(scope: RequestScope) -> UpdateOptions:
    return UpdateOptions(
        dry_run=_dry_run(scope, "UpdateOptions"),
        field_manager=manager_or_user_agent(_field_manager(scope, "UpdateOptions"), scope.user_agent),
        field_validation=_field_validation(scope, "UpdateOptions"),
        subresource=scope.subresource,
    )


def patch_options(scope: RequestScope, apply: bool) -> PatchOptions:
    """PatchOptions: apply needs a ``fieldManager`` and alone may ``force``."""
    dry_run = _dry_run(scope, "PatchOptions")
    manager = _field_manager(scope, "PatchOptions")
    force = parse_bool(scope, "force")
    if apply and not manager:
        raise invalid_options(
            "PatchOptions",
            [Cause("FieldValueRequired", "Required value: is required for apply patch", "fieldManager")],
        )
    if not apply and force is not None:
        raise invalid_options(
            "PatchOptions",
            [Cause("FieldValueForbidden", "Forbidden: may not be specified for non-apply patch", "force")],
        )
    return PatchOptions(
        dry_run=dry_run,
        field_manager=manager if apply else manager_or_user_agent(manager, scope.user_agent),
        field_validation=_field_validation(scope, "PatchOptions"),
        subresource=scope.subresource,
        force=bool(force),
    )


def delete_options(scope: RequestScope, body: dict | None) -> DeleteOptions:
    """DeleteOptions from the body (if any) and the query; the query wins."""
    body = body or {}
    if not isinstance(body, dict):
        raise errors.bad_request("DeleteOptions must be an object")
    dry_run = _dry_run(scope, "DeleteOptions")
    if not dry_run and body.get("dryRun"):
        if body["dryRun"] != ["All"]:
            raise invalid_options(
                "DeleteOptions",
                [Cause("FieldValueNotSupported", f'Unsupported value: "{v}": supported values: "All"', "dryRun") for v in body["dryRun"] if v != "All"],
            )
        dry_run = True
    grace = parse_int(scope, "gracePeriodSeconds")
    if grace is None and body.get("gracePeriodSeconds") is not None:
        grace = int(body["gracePeriodSeconds"])
    policy = scope.param("propagationPolicy") or body.get("propagationPolicy")
    if policy is not None and policy not in ("Orphan", "Background", "Foreground"):
        raise invalid_options(
            "DeleteOptions",
            [Cause("FieldValueNotSupported", f'Unsupported value: "{policy}": supported values: "Foreground", "Background", "Orphan", "nil"', "propagationPolicy")],
        )
    orphan = parse_bool(scope, "orphanDependents")
    if orphan is None and body.get("orphanDependents") is not None:
        orphan = bool(body["orphanDependents"])
    if orphan is not None and policy is not None:
        raise invalid_options(
            "DeleteOptions",
            [Cause("FieldValueInvalid", "Invalid value: \"\": orphanDependents and deletionPropagation cannot be both set", "propagationPolicy")],
        )
    if orphan is not None:
        policy = "Orphan" if orphan else "Background"
    pre = body.get("preconditions") or {}
    preconditions = None
    if pre.get("uid") or pre.get("resourceVersion"):
        preconditions = Preconditions(uid=pre.get("uid"), resource_version=pre.get("resourceVersion"))
    return DeleteOptions(
        dry_run=dry_run,
        preconditions=preconditions,
        grace_period_seconds=grace,
        propagation_policy=policy,
        orphan_dependents=orphan,
    )
