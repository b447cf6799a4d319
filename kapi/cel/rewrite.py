"""Rules rewritten for what the ``cel`` package does differently from cel-go.

* Optional field and index syntax (``a.?b``, ``m[?k]``), which it does not
  parse: ``a.?b`` is ``optional.of(a.b)`` when ``a`` has ``b`` and
  ``optional.none()`` otherwise; a field or index read on such an optional
  applies to its value and stays optional (``a.?b.c``). Those reads become
  ``_optSelect``/``_optField``/``_optIndex``/``_optAt`` calls.
* ``size()`` of a string, which it counts in UTF-8 bytes where CEL counts
  code points (``size("héllo")`` is 5): calls become ``_size``.

A rule needing either is printed back from its AST (binary operators fully
parenthesised, literals as written); every other rule is compiled from its
own text.
"""

from __future__ import annotations

import json
from typing import Any

import cel

from kapi.cel.parser import Node, walk

__all__ = ["FUNCTIONS", "needs_rewrite", "rewritten"]


def needs_rewrite(ast: Node) -> bool:
    return any(
        (n[0] == "select" and n[4])
        or (n[0] == "index" and n[3])
        or (n[0] == "call" and n[1] == "size")
        for n in walk(ast)
    )


def _size(value: Any) -> int:
    if isinstance(value, (str, bytes, list, dict)):
        return len(value)
    raise TypeError("no such overload")


def _unwrap(value: Any) -> tuple[bool, Any]:
    if isinstance(value, cel.OptionalValue):
        return (True, value.value()) if value.has_value() else (False, None)
    return True, value


def _opt_select(receiver: Any, name: str) -> Any:
    present, value = _unwrap(receiver)
    if present and isinstance(value, dict) and name in value:
        return cel.OptionalValue.of(value[name])
    return cel.OptionalValue.none()


def _opt_index(receiver: Any, key: Any) -> Any:
    present, value = _unwrap(receiver)
    if present and isinstance(value, dict) and key in value:
        return cel.OptionalValue.of(value[key])
    if (
        present
        and isinstance(value, list)
        and isinstance(key, int)
        and 0 <= key < len(value)
    ):
        return cel.OptionalValue.of(value[key])
    return cel.OptionalValue.none()


def _opt_field(receiver: Any, name: str) -> Any:
    """A plain read on an optional: applies to the value, stays optional."""
    present, value = _unwrap(receiver)
    if not present:
        return cel.OptionalValue.none()
    if isinstance(value, dict) and name in value:
        return cel.OptionalValue.of(value[name])
    raise KeyError(name)


def _opt_at(receiver: Any, key: Any) -> Any:
    present, value = _unwrap(receiver)
    if not present:
        return cel.OptionalValue.none()
    return cel.OptionalValue.of(value[key])


FUNCTIONS = {
    "_optSelect": _opt_select,
    "_optIndex": _opt_index,
    "_optField": _opt_field,
    "_optAt": _opt_at,
    "_size": _size,
}

_INFIX = {
    "_||_": "||",
    "_&&_": "&&",
    "_==_": "==",
    "_!=_": "!=",
    "_<_": "<",
    "_<=_": "<=",
    "_>_": ">",
    "_>=_": ">=",
    "_+_": "+",
    "_-_": "-",
    "_*_": "*",
    "_/_": "/",
    "_%_": "%",
    "@in": "in",
}


def _chained(node: Node) -> bool:
    """Whether ``node`` evaluates to an optional through ``.?``/``[?`` reads."""
    if node[0] == "select" and not node[3]:
        return node[4] or _chained(node[1])
    if node[0] == "index":
        return node[3] or _chained(node[1])
    return False


def rewritten(node: Node) -> str:
    """CEL source for ``node`` without optional syntax, with ``_size``."""
    kind = node[0]
    if kind == "lit":
        return node[2]
    if kind == "ident":
        return node[1]
    if kind == "select":
        _, operand, name, test_only, optional = node
        if test_only:
            return f"has({rewritten(operand)}.{name})"
        if optional:
            return f"_optSelect({rewritten(operand)}, {json.dumps(name)})"
        if _chained(operand):
            return f"_optField({rewritten(operand)}, {json.dumps(name)})"
        return f"{rewritten(operand)}.{name}"
    if kind == "index":
        _, operand, index, optional = node
        if optional:
            return f"_optIndex({rewritten(operand)}, {rewritten(index)})"
        if _chained(operand):
            return f"_optAt({rewritten(operand)}, {rewritten(index)})"
        return f"{rewritten(operand)}[{rewritten(index)}]"
    if kind == "call":
        _, name, target, args = node
        if name in _INFIX:
            return f"({rewritten(args[0])} {_INFIX[name]} {rewritten(args[1])})"
        if name == "!_":
            return f"!({rewritten(args[0])})"
        if name == "-_":
            return f"-({rewritten(args[0])})"
        if name == "size" and len(args) + (target is not None) == 1:
            return f"_size({rewritten(target if target is not None else args[0])})"
        inner = ", ".join(rewritten(a) for a in args)
        if target is not None:
            return f"{rewritten(target)}.{name}({inner})"
        return f"{name}({inner})"
    if kind == "macro":
        _, name, target, var, args = node
        inner = ", ".join([var, *(rewritten(a) for a in args)])
        return f"{rewritten(target)}.{name}({inner})"
    if kind == "list":
        return "[" + ", ".join(rewritten(a) for a in node[1]) + "]"
    if kind == "map":
        return (
            "{" + ", ".join(f"{rewritten(k)}: {rewritten(v)}" for k, v in node[1]) + "}"
        )
    if kind == "cond":
        return f"({rewritten(node[1])} ? {rewritten(node[2])} : {rewritten(node[3])})"
    if kind == "struct":
        fields = ", ".join(f"{name}: {rewritten(v)}" for name, v in node[2])
        return f"{rewritten(node[1])}{{{fields}}}"
    raise ValueError(f"cannot print {kind}")
