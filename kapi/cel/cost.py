"""What a CEL rule may cost, in cel-go's cost units, from the sizes it works on.

kube refuses a CRD whose rule's *estimated* cost, computed from the schema's
bounds (``maxItems``, ``maxLength``, ``maxProperties``; unbounded ones sized
by the 3 MiB request limit), exceeds ``PER_RULE_LIMIT``, or whose rules
together (each times the number of places it runs) exceed ``TOTAL_LIMIT``.
At run time kube stops a rule whose *actual* cost exceeds ``PER_CALL_LIMIT``
and stops validating once ``RUNTIME_BUDGET`` is spent.

The ``cel`` package does not count steps and holds the GIL while it runs, so
nothing could stop a rule once started. Instead the same estimate runs again
before each evaluation with the sizes of the actual values: a rule is run only
if even its worst case over *those* values fits the per-call limit, which
bounds the work any request can cause. Costs follow cel-go's model: one unit
per variable, field or index access and per call; comprehensions cost their
body once per element; string and list functions cost in proportion to the
sizes they walk (0.1 per character, regexes 0.25).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from kapi.cel.parser import Node
from kapi.cel.values import escape_property

__all__ = [
    "PER_CALL_LIMIT",
    "PER_RULE_LIMIT",
    "RUNTIME_BUDGET",
    "TOTAL_LIMIT",
    "Shape",
    "cost_message",
    "estimate",
    "shape_of_schema",
    "shape_of_value",
]

PER_RULE_LIMIT = 10_000_000  # StaticEstimatedCostLimit
TOTAL_LIMIT = 100_000_000  # StaticEstimatedCRDCostLimit
PER_CALL_LIMIT = 1_000_000  # PerCallLimit
RUNTIME_BUDGET = 10_000_000  # RuntimeCELCostBudget
MAX_REQUEST_BYTES = 3 * 1024 * 1024
_TRAVERSAL = 0.1
_REGEX = 0.25


@dataclass
class Shape:
    """The largest a value can be: ``size`` characters/elements/entries, with
    ``items`` the shape of list elements or map values and ``props`` fields."""

    size: int = 1
    items: Shape | None = None
    props: dict[str, Shape] = field(default_factory=dict)


SCALAR = Shape(1)


def _unbounded() -> Shape:
    shape = Shape(MAX_REQUEST_BYTES - 2)
    shape.items = shape
    return shape


UNKNOWN = _unbounded()


def _min_size(schema: dict) -> int:
    kind = schema.get("type")
    if kind == "string":
        return 2 + int(schema.get("minLength") or 0)
    if kind == "boolean":
        return 4
    if kind == "object":
        # {} plus each required property without a default: "name":value,
        props = schema.get("properties") or {}
        return 2 + sum(
            len(name) + _min_size(props[name]) + 4
            for name in schema.get("required") or ()
            if isinstance(props.get(name), dict) and "default" not in props[name]
        )
    if kind == "array":
        return 2
    return 1


def shape_of_schema(schema: Any, root: bool = False) -> Shape:
    """The largest value a structural schema admits."""
    if not isinstance(schema, dict):
        return SCALAR
    if schema.get("x-kubernetes-int-or-string"):
        return Shape(MAX_REQUEST_BYTES - 2)
    kind = schema.get("type")
    if kind == "string":
        return Shape(int(schema.get("maxLength") or MAX_REQUEST_BYTES - 2))
    if kind == "array":
        items = schema.get("items") if isinstance(schema.get("items"), dict) else {}
        size = schema.get("maxItems")
        if size is None:
            size = (MAX_REQUEST_BYTES - 2) // (_min_size(items) + 1)
        return Shape(int(size), shape_of_schema(items))
    if kind == "object" or schema.get("x-kubernetes-preserve-unknown-fields"):
        props = {
            escape_property(k): shape_of_schema(v)
            for k, v in (schema.get("properties") or {}).items()
        }
        if root or schema.get("x-kubernetes-embedded-resource"):
            props.setdefault("apiVersion", Shape(253))
            props.setdefault("kind", Shape(63))
            props["metadata"] = Shape(
                2, None, {"name": Shape(253), "generateName": Shape(253)}
            )
        additional = schema.get("additionalProperties")
        if isinstance(additional, dict):
            size = schema.get("maxProperties")
            if size is None:
                size = (MAX_REQUEST_BYTES - 2) // (_min_size(additional) + 6)
            return Shape(int(size), shape_of_schema(additional), props)
        if schema.get("x-kubernetes-preserve-unknown-fields") and not props:
            return UNKNOWN
        return Shape(max(len(props), 1), None, props)
    return SCALAR


def _merge(a: Shape | None, b: Shape | None) -> Shape | None:
    if a is None or b is None:
        return a or b
    if a is b:
        return a
    props = dict(a.props)
    for key, value in b.props.items():
        props[key] = _merge(props.get(key), value) or SCALAR
    return Shape(max(a.size, b.size), _merge(a.items, b.items), props)


def shape_of_value(value: Any) -> Shape:
    """The shape of an actual value (for the run-time check)."""
    if isinstance(value, (str, bytes)):
        return Shape(max(len(value), 1))
    if isinstance(value, list):
        items = None
        for item in value:
            items = _merge(items, shape_of_value(item))
        return Shape(max(len(value), 1), items)
    if isinstance(value, dict):
        items = None
        props = {}
        for key, item in value.items():
            shape = shape_of_value(item)
            props[key] = shape
            items = _merge(items, shape)
        return Shape(max(len(value), 1), items, props)
    return SCALAR


def _scaled(size: int, factor: float) -> int:
    return math.ceil(size * factor)


_LINEAR_LIST = {
    "sum",
    "min",
    "max",
    "isSorted",
    "indexOf",
    "lastIndexOf",
    "distinct",
    "flatten",
    "reverse",
    "slice",
    "first",
    "last",
    "join",
    "contains",
    "sets.contains",
    "sets.equivalent",
    "sets.intersects",
    "math.greatest",
    "math.least",
}
_STRING_PRODUCERS = {
    "lowerAscii",
    "upperAscii",
    "replace",
    "trim",
    "substring",
    "reverse",
    "format",
    "string",
    "strings.quote",
    "join",
    "find",
    "charAt",
    "base64.encode",
    "base64.decode",
    "getScheme",
    "getHost",
    "getHostname",
    "getPort",
    "getEscapedPath",
}


def estimate(node: Node, env: dict[str, Shape]) -> tuple[float, Shape]:
    """(worst-case cost, shape of the result) of ``node`` with variables of these shapes."""
    kind = node[0]
    if kind == "lit":
        value = node[1]
        return 0, Shape(len(value)) if isinstance(value, (str, bytes)) else SCALAR
    if kind == "ident":
        return 1, env.get(node[1], SCALAR)
    if kind == "select":
        cost, shape = estimate(node[1], env)
        sub = shape.props.get(node[2]) or shape.items or SCALAR
        return cost + 1, SCALAR if node[3] else sub
    if kind == "index":
        cost, shape = estimate(node[1], env)
        index_cost, index_shape = estimate(node[2], env)
        key = node[2][1] if node[2][0] == "lit" else None
        sub = shape.props.get(key) if isinstance(key, str) else None
        return cost + index_cost + 1, sub or shape.items or SCALAR
    if kind == "list":
        costs = [estimate(item, env) for item in node[1]]
        items = None
        for _, shape in costs:
            items = _merge(items, shape)
        return 10 + sum(c for c, _ in costs), Shape(max(len(costs), 1), items)
    if kind == "map":
        total, items, props = 30, None, {}
        for key, value in node[1]:
            key_cost, _ = estimate(key, env)
            value_cost, shape = estimate(value, env)
            total += key_cost + value_cost
            items = _merge(items, shape)
            if key[0] == "lit" and isinstance(key[1], str):
                props[key[1]] = shape
        return total, Shape(max(len(node[1]), 1), items, props)
    if kind == "struct":
        return 40 + sum(estimate(v, env)[0] for _, v in node[2]), SCALAR
    if kind == "cond":
        test, _ = estimate(node[1], env)
        a_cost, a_shape = estimate(node[2], env)
        b_cost, b_shape = estimate(node[3], env)
        return test + max(a_cost, b_cost), _merge(a_shape, b_shape) or SCALAR
    if kind == "macro":
        return _macro(node, env)
    return _call(node, env)


def _macro(node: Node, env: dict[str, Shape]) -> tuple[float, Shape]:
    _, name, target, var, args = node
    range_cost, range_shape = estimate(target, env)
    element = range_shape.items or SCALAR
    if range_shape.props and range_shape.items is None:
        element = Shape(max(len(k) for k in range_shape.props))  # a map's keys
    inner = {**env, var: element}
    body_cost = 0.0
    result = SCALAR
    for arg in args:
        cost, result = estimate(arg, inner)
        body_cost += cost
    total = range_cost + range_shape.size * (body_cost + 1)
    if name == "map":
        return total, Shape(range_shape.size, result)
    if name == "filter":
        return total, Shape(range_shape.size, element)
    return total, SCALAR


def _call(node: Node, env: dict[str, Shape]) -> tuple[float, Shape]:
    _, name, target, args = node
    if target is not None and target[0] == "ident" and target[1] in _NAMESPACES:
        name, target = f"{target[1]}.{name}", None
    operands = ([target] if target is not None else []) + list(args)
    estimated = [estimate(o, env) for o in operands]
    cost = sum(c for c, _ in estimated) + 1
    shapes = [s for _, s in estimated] or [SCALAR]
    first = shapes[0]
    largest = max(s.size for s in shapes)
    if name in ("_==_", "_!=_", "_<_", "_<=_", "_>_", "_>=_"):
        return cost + _scaled(min(s.size for s in shapes), _TRAVERSAL), SCALAR
    if name == "_+_":
        size = sum(s.size for s in shapes)
        return cost + _scaled(size, _TRAVERSAL), Shape(
            size,
            _merge(*[s.items for s in shapes[:2]]) if len(shapes) > 1 else first.items,
        )
    if name == "@in":
        return cost + shapes[-1].size, SCALAR
    if name in ("contains",) and len(shapes) == 2 and not shapes[0].items:
        return cost + _scaled(shapes[0].size * shapes[1].size, _TRAVERSAL), SCALAR
    if name in ("startsWith", "endsWith"):
        return cost + _scaled(shapes[-1].size, _TRAVERSAL), SCALAR
    if name in ("matches", "find", "findAll"):
        regex = max(_scaled(shapes[-1].size if len(shapes) > 1 else 1, _REGEX), 1)
        out = (
            Shape(first.size, Shape(first.size))
            if name == "findAll"
            else Shape(first.size)
        )
        return cost + _scaled(first.size, _REGEX) * regex, out
    if name == "split":
        return cost + _scaled(first.size, _TRAVERSAL), Shape(
            first.size, Shape(first.size)
        )
    if name == "sort":
        n = first.size
        return cost + n * max(math.ceil(math.log2(n + 1)), 1), first
    if name in _LINEAR_LIST and first.items is not None:
        elements = first.size * max(_scaled(first.items.size, _TRAVERSAL), 1)
        result = (
            Shape(first.size * first.items.size)
            if name == "join"
            else (
                first.items if name in ("min", "max", "sum", "first", "last") else first
            )
        )
        return cost + elements, result
    if name in _STRING_PRODUCERS:
        return cost + _scaled(largest, _TRAVERSAL), Shape(largest)
    if name in (
        "url",
        "ip",
        "cidr",
        "quantity",
        "isURL",
        "isIP",
        "isCIDR",
        "isQuantity",
        "semver",
        "isSemver",
    ):
        return cost + _scaled(largest, _TRAVERSAL), SCALAR
    if name == "getQuery":
        return cost + _scaled(largest, _TRAVERSAL), Shape(
            largest, Shape(largest, Shape(largest))
        )
    if name == "lists.range":
        return cost, Shape(MAX_REQUEST_BYTES, SCALAR)
    return cost, SCALAR


_NAMESPACES = {"math", "sets", "base64", "strings", "lists", "format", "ip", "optional"}


def cost_message(subject: str, cost: float, limit: int) -> str:
    """kube's ``getCostErrorMessage``."""
    factor = cost / limit
    if factor > 100:
        text = "more than 100x"
    elif factor < 1.5:
        text = f"{factor:f}x"
    else:
        text = f"{factor:.1f}x"
    return (
        f"{subject} exceeds budget by factor of {text} (try simplifying the rule(s), "
        "or adding maxItems, maxProperties, and maxLength where arrays, maps, and "
        "strings are declared)"
    )
