"""Defaulting a string field the way kube's ``SetDefaults_*`` functions do.

kube decodes JSON into Go structs, where a missing string field, ``null`` and
``""`` all become the empty string, and its defaulting reads ``if x.Field == ""
{ x.Field = value }``. So for a non-pointer string field, ``""`` (or ``null``)
is defaulted like a missing field, and never reaches validation as a bad enum
value. Pointer fields (``*string`` in kube's types, e.g. a Service's
``internalTrafficPolicy``) keep an explicit ``""``: use ``dict.setdefault``.
"""

from __future__ import annotations

from typing import Any

__all__ = ["default_string"]


def default_string(obj: dict[str, Any], key: str, value: str) -> Any:
    """Set ``obj[key]`` to ``value`` when it is missing, ``None`` or ``""``;
    return the field's value. MUTATES ``obj``."""
    current = obj.get(key)
    if current is None or current == "":
        obj[key] = value
        return value
    return current
