"""Validating objects against OpenAPI schemas with ``jsonschema``, reported as kube does.

Built-in kinds validate against the published definitions
(``kapi.registry.definitions``); custom resources against their CRD's
``openAPIV3Schema`` after ``openapi_to_jsonschema`` turned OpenAPI 3.0's
keywords (``nullable``, boolean ``exclusiveMinimum``, ``x-kubernetes-int-or-string``,
``x-kubernetes-embedded-resource``) into JSON Schema 2020-12. Errors become
``Cause``s with kube's field paths and wording
(``spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer``).
"""

from __future__ import annotations

import base64
import binascii
import functools
import ipaddress
import re
import uuid
from collections.abc import Iterable
from datetime import date, datetime
from typing import Any

from jsonschema import Draft202012Validator, FormatChecker
from jsonschema.exceptions import ValidationError

from kapi import quantity as quantities
from kapi.errors import Cause
from kapi.registry.decodeerrors import TypeMismatch
from kapi.registry.definitions import definitions
from kapi.registry.fastschema import Check, compile_schema

__all__ = [
    "FORMAT_CHECKER",
    "field_path",
    "openapi_to_jsonschema",
    "schema_causes",
    "validator_for_definition",
    "validator_for_schema",
]

_DURATION_RE = re.compile(r"^([+-]?(\d+(\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h))+$|^0$")
_EMAIL_RE = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
_HOSTNAME_RE = re.compile(
    r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$", re.IGNORECASE
)

FORMAT_CHECKER = FormatChecker(formats=())


def _format(name: str):
    def register(func):
        FORMAT_CHECKER.checks(name)(
            lambda value: not isinstance(value, str) or func(value)
        )
        return func

    return register


@_format("quantity")
def _quantity(value: str) -> bool:
    return bool(quantities.PATTERN.match(value))


@_format("byte")
def _byte(value: str) -> bool:
    try:
        base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


@_format("date-time")
def _date_time(value: str) -> bool:
    try:
        datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return False
    return "T" in value or "t" in value


@_format("date")
def _date(value: str) -> bool:
    try:
        date.fromisoformat(value)
    except ValueError:
        return False
    return True


@_format("uuid")
def _uuid(value: str) -> bool:
    try:
        uuid.UUID(value)
    except ValueError:
        return False
    return True


@_format("ipv4")
def _ipv4(value: str) -> bool:
    try:
        ipaddress.IPv4Address(value)
    except ValueError:
        return False
    return True


@_format("ipv6")
def _ipv6(value: str) -> bool:
    try:
        ipaddress.IPv6Address(value)
    except ValueError:
        return False
    return True


@_format("cidr")
def _cidr(value: str) -> bool:
    try:
        ipaddress.ip_network(value, strict=False)
    except ValueError:
        return False
    return "/" in value


@_format("duration")
def _duration(value: str) -> bool:
    return bool(_DURATION_RE.match(value))


@_format("email")
def _email(value: str) -> bool:
    return bool(_EMAIL_RE.match(value))


@_format("hostname")
def _hostname(value: str) -> bool:
    return len(value) <= 253 and bool(_HOSTNAME_RE.match(value))


FORMAT_CHECKER.checks("int32")(
    lambda v: not isinstance(v, int) or -(2**31) <= v < 2**31
)
FORMAT_CHECKER.checks("int64")(
    lambda v: not isinstance(v, int) or -(2**63) <= v < 2**63
)


_DEFS_PREFIX = "#/$defs/"


def _inlined(name: str, defs: dict[str, Any], done: dict[str, Any], stack: set[str]) -> Any:
    """Definition ``name`` with every ``$ref`` to another definition replaced by
    that definition (shared, not copied), except a ``$ref`` back into a cycle
    (JSONSchemaProps), which stays and resolves against ``$defs``. The siblings
    of a ``$ref`` in the published definitions are annotations only
    (``description``, ``x-kubernetes-*``), so nothing that validates is lost.
    jsonschema resolves a ``$ref`` anew at each use: about a third of the cost
    of validating a Deployment, gone."""
    if name in done:
        return done[name]
    stack.add(name)

    def walk(node: Any) -> Any:
        if isinstance(node, list):
            return [walk(v) for v in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith(_DEFS_PREFIX):
            target = ref[len(_DEFS_PREFIX):]
            if target in stack or target not in defs:
                return node
            return _inlined(target, defs, done, stack)
        return {k: walk(v) for k, v in node.items()}

    result = walk(defs[name])
    stack.discard(name)
    done[name] = result
    return result


_INLINED: dict[str, Any] = {}


@functools.cache
def validator_for_definition(name: str) -> Draft202012Validator:
    """A compiled validator for one published definition (shared, thread-safe)."""
    defs = definitions()
    root = dict(_inlined(name, defs, _INLINED, set()))
    root["$defs"] = defs
    return Draft202012Validator(root, format_checker=FORMAT_CHECKER)


def validator_for_schema(schema: dict[str, Any]) -> Draft202012Validator:
    """A validator for a CRD's ``openAPIV3Schema`` (in OpenAPI form)."""
    return Draft202012Validator(
        openapi_to_jsonschema(schema), format_checker=FORMAT_CHECKER
    )


def openapi_to_jsonschema(schema: Any) -> Any:
    """OpenAPI 3.0 (as CRDs write it) to JSON Schema 2020-12. Returns a new object."""
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in ("properties", "patternProperties") and isinstance(value, dict):
            out[key] = {k: openapi_to_jsonschema(v) for k, v in value.items()}
        elif key in ("items", "additionalProperties", "not"):
            out[key] = (
                openapi_to_jsonschema(value) if isinstance(value, dict) else value
            )
        elif key in ("allOf", "anyOf", "oneOf") and isinstance(value, list):
            out[key] = [openapi_to_jsonschema(v) for v in value]
        elif key in (
            "exclusiveMinimum",
            "exclusiveMaximum",
            "nullable",
            "default",
            "description",
        ) or key.startswith("x-kubernetes-"):
            continue
        else:
            out[key] = value
    if schema.get("x-kubernetes-int-or-string"):
        out.pop("type", None)
        out["type"] = ["integer", "string"]
    if schema.get("nullable") and "type" in out:
        types = out["type"] if isinstance(out["type"], list) else [out["type"]]
        out["type"] = [*types, "null"]
        if "enum" in out:
            out["enum"] = [*out["enum"], None]
    for bound, exclusive in (
        ("minimum", "exclusiveMinimum"),
        ("maximum", "exclusiveMaximum"),
    ):
        if schema.get(exclusive) is True and bound in schema:
            out.pop(bound, None)
            out[exclusive] = schema[bound]
    if schema.get("x-kubernetes-embedded-resource"):
        out["required"] = sorted({*out.get("required", ()), "apiVersion", "kind"})
    return out


def field_path(parts: Iterable[Any], prefix: str = "") -> str:
    """``spec.template.spec.containers[0].name`` from a jsonschema error path."""
    out = prefix
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out = f"{out}.{part}" if out else str(part)
    return out


_GO_TYPE = {
    bool: "boolean",
    int: "integer",
    float: "number",
    str: "string",
    list: "array",
    dict: "object",
    type(None): "null",
}


def _quote(value: Any) -> str:
    if isinstance(value, str):
        return '"' + value.replace('"', '\\"') + '"'
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, (dict, list)):
        return '"' + _GO_TYPE[type(value)] + '"'
    return str(value)


def _type_names(schema: dict[str, Any]) -> str:
    kinds = schema.get("type")
    kinds = kinds if isinstance(kinds, list) else [kinds]
    names = [k for k in kinds if k and k != "null"]
    if names == ["integer", "string"] or names == ["string", "integer"]:
        return "int-or-string"
    return "/".join(names)


_DESCENT = (
    "properties",
    "additionalProperties",
    "items",
    "prefixItems",
    "patternProperties",
)


def _error_path(error: ValidationError, prefix: str) -> str:
    """Like ``field_path`` but with map keys as ``[key]`` (kube's ``field.Path.Key``),
    told apart from properties by the schema keyword the error descended through."""
    schema_path = list(error.absolute_schema_path)
    out = prefix
    j = 0
    for part in error.absolute_path:
        while j < len(schema_path) and schema_path[j] not in _DESCENT:
            j += 1
        keyword = schema_path[j] if j < len(schema_path) else "properties"
        j += 2 if keyword in ("properties", "patternProperties", "prefixItems") else 1
        if isinstance(part, int) or keyword == "additionalProperties":
            out += f"[{part}]"
        else:
            out = f"{out}.{part}" if out else str(part)
    return out


def _cause(error: ValidationError, prefix: str) -> Cause:
    path = _error_path(error, prefix)
    value = error.instance
    rule = error.validator
    schema = error.schema if isinstance(error.schema, dict) else {}
    where = path or "<root>"
    if rule == "required":
        missing = error.message.split("'")[1] if "'" in error.message else ""
        return Cause(
            "FieldValueRequired", "Required value", field_path([missing], path)
        )
    if rule == "type":
        type_name = _GO_TYPE.get(type(value), "unknown")
        message = (
            f'Invalid value: "{type_name}": {where} in body must be of type '
            f'{_type_names(schema)}: "{type_name}"'
        )
        if value is None:
            return Cause("FieldValueTypeInvalid", message, path)
        return TypeMismatch(
            "FieldValueTypeInvalid",
            message,
            path,
            parts=tuple(error.absolute_path),
            json_kind=TypeMismatch.kind_of(value),
        )
    if rule == "enum":
        supported = ", ".join(_quote(v) for v in error.validator_value if v is not None)
        return Cause(
            "FieldValueNotSupported",
            f"Unsupported value: {_quote(value)}: supported values: {supported}",
            path,
        )
    if rule == "oneOf":
        formats = [e for e in (error.context or ()) if e.validator == "format"]
        if formats and formats[0].validator_value == "quantity":
            return Cause(
                "FieldValueInvalid",
                f"Invalid value: {_quote(value)}: quantities must match the regular expression "
                "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
                path,
            )
        kinds = sorted(
            {_type_names(s) for s in error.validator_value if isinstance(s, dict)}
        )
        kind = "int-or-string" if kinds == ["integer", "string"] else "/".join(kinds)
        type_name = _GO_TYPE.get(type(value), "unknown")
        return Cause(
            "FieldValueTypeInvalid",
            f'Invalid value: "{type_name}": {where} in body must be of type {kind}: "{type_name}"',
            path,
        )
    if rule == "format":
        return Cause(
            "FieldValueInvalid",
            f"Invalid value: {_quote(value)}: {where} in body must be of type "
            f"{error.validator_value}: {_quote(value)}",
            path,
        )
    messages = {
        "maximum": "should be less than or equal to {}",
        "minimum": "should be greater than or equal to {}",
        "exclusiveMaximum": "should be less than {}",
        "exclusiveMinimum": "should be greater than {}",
        "minLength": "should be at least {} chars long",
        "pattern": "should match '{}'",
        "multipleOf": "should be a multiple of {}",
        "minProperties": "should have at least {} properties",
        "minItems": "should have at least {} items",
    }
    # kube's kubeOpenAPIResultToFieldErrors: maxLength is field.TooLongMaxLength,
    # maxItems and maxProperties are field.TooMany (so clients can match reasons).
    if rule == "maxLength":
        return Cause(
            "FieldValueTooLong",
            f"Too long: may not be longer than {error.validator_value}",
            path,
        )
    if rule in ("maxItems", "maxProperties"):
        return Cause(
            "FieldValueTooMany",
            f"Too many: {len(value)}: must have at most {error.validator_value} items",
            path,
        )
    if rule == "uniqueItems":
        seen: list[Any] = []
        for index, item in enumerate(value):
            if item in seen:
                return Cause(
                    "FieldValueDuplicate",
                    f"Duplicate value: {_quote(item)}",
                    f"{path}[{index}]",
                )
            seen.append(item)
    if rule in messages:
        text = messages[rule].format(error.validator_value)
        return Cause(
            "FieldValueInvalid",
            f"Invalid value: {_quote(value)}: {where} in body {text}",
            path,
        )
    return Cause(
        "FieldValueInvalid", f"Invalid value: {_quote(value)}: {error.message}", path
    )


#: id(validator) -> (validator, its compiled check); the validator is kept so
#: that its id is not reused. Built-in definitions have one validator each,
#: CRD versions one per schema they were built with: bounded by a reset.
_CHECKS: dict[int, tuple[Draft202012Validator, Check]] = {}
_MAX_CHECKS = 512


def _certainly_valid(validator: Draft202012Validator, obj: Any) -> bool:
    entry = _CHECKS.get(id(validator))
    if entry is None or entry[0] is not validator:
        if len(_CHECKS) >= _MAX_CHECKS:
            _CHECKS.clear()
        entry = (validator, compile_schema(validator.schema, validator.format_checker))
        _CHECKS[id(validator)] = entry
    return entry[1](obj)


def schema_causes(
    validator: Draft202012Validator, obj: Any, prefix: str = ""
) -> list[Cause]:
    """Every schema violation of ``obj``, in document order. Does not mutate ``obj``.

    The compiled check (``kapi.registry.fastschema``) answers for the valid
    objects; ``jsonschema`` finds and words the errors of the others."""
    if _certainly_valid(validator, obj):
        return []
    errors = sorted(
        validator.iter_errors(obj), key=lambda e: [str(p) for p in e.absolute_path]
    )
    return [_cause(e, prefix) for e in errors]
