"""Objects as CEL sees them, per kube's ``UnstructuredToVal``.

* Declared property names that are CEL keywords or not identifiers are
  escaped: ``namespace`` → ``__namespace__``, ``a.b`` → ``a__dot__b``,
  ``a-b`` → ``a__dash__b``, ``a/b`` → ``a__slash__b``, ``__`` →
  ``__underscores__`` (map keys of ``additionalProperties`` and
  unknown fields stay as they are: they are read with ``m["key"]``).
* Strings with ``format: date-time``/``date`` are timestamps, ``duration``
  durations and ``byte`` bytes.
"""

from __future__ import annotations

import base64
import re
from datetime import UTC, datetime, timedelta
from typing import Any

__all__ = ["escape_property", "to_cel"]

_KEYWORDS = {
    "true", "false", "null", "in", "as", "break", "const", "continue", "else",
    "for", "function", "if", "import", "let", "loop", "package", "namespace",
    "return", "var", "void", "while",
}  # fmt: skip
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def escape_property(name: str) -> str:
    """kube's ``Escape`` for a declared property name."""
    if name in _KEYWORDS:
        return f"__{name}__"
    escaped = (
        name.replace("__", "__underscores__")
        .replace(".", "__dot__")
        .replace("-", "__dash__")
        .replace("/", "__slash__")
    )
    return escaped if _IDENTIFIER.match(escaped) else name


_DURATION_PART = re.compile(r"([+-]?(?:\d+(?:\.\d*)?|\.\d+))(ns|us|µs|ms|s|m|h)")
_UNITS = {"ns": 1e-3, "us": 1, "µs": 1, "ms": 1e3, "s": 1e6, "m": 60e6, "h": 3600e6}


def _duration(text: str) -> Any:
    parts = _DURATION_PART.findall(text)
    if not parts or "".join(a + b for a, b in parts) != text.lstrip("+"):
        return text
    return timedelta(microseconds=sum(float(n) * _UNITS[u] for n, u in parts))


def _timestamp(text: str, date_only: bool) -> Any:
    try:
        if date_only:
            return datetime.fromisoformat(text).replace(tzinfo=UTC)
        return datetime.fromisoformat(
            text.replace("Z", "+00:00").replace("z", "+00:00")
        )
    except ValueError:
        return text


def _formatted(value: str, fmt: str) -> Any:
    if fmt == "date-time":
        return _timestamp(value, False)
    if fmt == "date":
        return _timestamp(value, True)
    if fmt == "duration":
        return _duration(value)
    if fmt == "byte":
        try:
            return base64.b64decode(value, validate=True)
        except ValueError:
            return value
    return value


def to_cel(value: Any, schema: Any) -> Any:
    """``value`` with escaped property names and formatted strings. Returns new
    containers; does not mutate ``value``."""
    if not isinstance(schema, dict):
        return value
    if isinstance(value, dict):
        props = schema.get("properties") or {}
        additional = schema.get("additionalProperties")
        out = {}
        for key, item in value.items():
            if key in props:
                out[escape_property(key)] = to_cel(item, props[key])
            elif isinstance(additional, dict):
                out[key] = to_cel(item, additional)
            else:
                out[key] = item
        return out
    if isinstance(value, list):
        items = schema.get("items")
        return (
            [to_cel(item, items) for item in value]
            if isinstance(items, dict)
            else value
        )
    if isinstance(value, str) and schema.get("format"):
        return _formatted(value, schema["format"])
    return value
