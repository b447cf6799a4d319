"""Field errors: builders for the ``Cause`` entries of a 422 Invalid ``Status``.

Mirrors apimachinery ``pkg/util/validation/field/errors.go``: each builder
returns a :class:`kapi.errors.Cause` whose ``type`` is the kube CauseType and
whose ``message`` is what ``field.Error.ErrorBody()`` renders, e.g.
``Invalid value: "Foo_": a lowercase RFC 1123 ...`` or ``Required value``.
The field path travels separately in ``Cause.field`` so that
``kapi.errors.invalid`` can build ``<Kind> "<name>" is invalid: <field>: <message>``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from kapi.errors import Cause

__all__ = [
    "DUPLICATE",
    "FORBIDDEN",
    "INVALID",
    "NOT_SUPPORTED",
    "REQUIRED",
    "TOO_LONG",
    "TYPE_INVALID",
    "duplicate",
    "forbidden",
    "go_quote",
    "index",
    "invalid",
    "key",
    "not_supported",
    "render_value",
    "required",
    "too_long",
    "type_invalid",
]

REQUIRED = "FieldValueRequired"
INVALID = "FieldValueInvalid"
NOT_SUPPORTED = "FieldValueNotSupported"
DUPLICATE = "FieldValueDuplicate"
TOO_LONG = "FieldValueTooLong"
FORBIDDEN = "FieldValueForbidden"
TYPE_INVALID = "FieldValueTypeInvalid"

_GO_ESCAPES = {
    "\a": "\\a",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\v": "\\v",
    "\\": "\\\\",
    '"': '\\"',
}


def go_quote(value: str) -> str:
    """Quote ``value`` as Go's ``%q`` does, so messages match kube byte for byte.

    Unlike ``json.dumps`` this keeps printable non-ASCII as is and writes
    control characters as ``\\x01`` rather than ``\\u0001``.
    """
    out = ['"']
    for ch in value:
        if ch in _GO_ESCAPES:
            out.append(_GO_ESCAPES[ch])
        elif ch.isprintable() or ch == " ":
            out.append(ch)
        elif ord(ch) < 0x80:
            out.append(f"\\x{ord(ch):02x}")
        elif ord(ch) <= 0xFFFF:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(f"\\U{ord(ch):08x}")
    out.append('"')
    return "".join(out)


def render_value(value: Any) -> str:
    """Render a bad value the way ``ErrorBody`` does: strings quoted, scalars bare,
    everything else as compact JSON (``null`` for a missing pointer)."""
    if isinstance(value, str):
        return go_quote(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def index(path: str, i: int) -> str:
    """``path[i]``, as ``field.Path.Index`` prints it."""
    return f"{path}[{i}]"


def key(path: str, k: str) -> str:
    """``path[k]``, as ``field.Path.Key`` prints it."""
    return f"{path}[{k}]"


def _with_detail(head: str, detail: str) -> str:
    return f"{head}: {detail}" if detail else head


def required(field: str, detail: str = "") -> Cause:
    return Cause(REQUIRED, _with_detail("Required value", detail), field)


def invalid(field: str, value: Any, detail: str = "") -> Cause:
    return Cause(
        INVALID, _with_detail(f"Invalid value: {render_value(value)}", detail), field
    )


def type_invalid(field: str, value: Any, detail: str = "") -> Cause:
    return Cause(
        TYPE_INVALID,
        _with_detail(f"Invalid value: {render_value(value)}", detail),
        field,
    )


def duplicate(field: str, value: Any) -> Cause:
    return Cause(DUPLICATE, f"Duplicate value: {render_value(value)}", field)


def forbidden(field: str, detail: str = "") -> Cause:
    return Cause(FORBIDDEN, _with_detail("Forbidden", detail), field)


def too_long(field: str, max_bytes: int) -> Cause:
    """``Too long: may not be more than N bytes`` (kube >= 1.32 wording)."""
    unit = "byte" if max_bytes == 1 else "bytes"
    detail = (
        f"may not be more than {max_bytes} {unit}"
        if max_bytes >= 0
        else "value is too long"
    )
    return Cause(TOO_LONG, f"Too long: {detail}", field)


def not_supported(field: str, value: Any, supported: Iterable[str]) -> Cause:
    quoted = [go_quote(str(v)) for v in supported]
    detail = "supported values: " + ", ".join(quoted) if quoted else ""
    return Cause(
        NOT_SUPPORTED,
        _with_detail(f"Unsupported value: {render_value(value)}", detail),
        field,
    )
