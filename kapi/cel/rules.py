"""``x-kubernetes-validations``: checking rules in a CRD and running them on
custom resources, with apiextensions-apiserver's messages.

On the CRD (``compile_rules``): each rule parses, references only ``self``,
``oldSelf`` (not where old values cannot be correlated: items of lists other
than ``list-type: map``) and functions kube declares, fits the cost limits
(``kapi.cel.cost``); ``messageExpression``, ``reason`` and ``fieldPath`` are
checked too.

On a custom resource (``cel_causes``): rules run per schema node with ``self``
(and ``oldSelf`` on update, correlated through properties, map keys and
``list-type: map`` keys); transition rules run only with an old value, unless
``optionalOldSelf``. A rule that fails reports ``message``/``messageExpression``
with ``reason`` at ``fieldPath``; evaluation errors, the per-call cost limit
and the per-object budget are reported as kube does.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any

import cel

from kapi.cel import cost as costs
from kapi.cel.fieldpath import field_path_target
from kapi.cel.library import FUNCTIONS, new_context
from kapi.cel.parser import ParseError, parse, walk
from kapi.cel.rewrite import needs_rewrite, rewritten
from kapi.cel.values import to_cel
from kapi.errors import Cause

__all__ = ["cel_causes", "compile_rules"]

Schema = dict[str, Any]
_REASONS = (
    "FieldValueInvalid",
    "FieldValueForbidden",
    "FieldValueRequired",
    "FieldValueDuplicate",
)
#: Functions the ``cel`` package provides natively (cel-go's standard library).
_BUILTINS = {
    "size", "matches", "contains", "startsWith", "endsWith", "int", "uint",
    "double", "string", "bytes", "bool", "timestamp", "duration", "dyn", "type",
    "getFullYear", "getMonth", "getDate", "getDayOfMonth", "getDayOfWeek",
    "getDayOfYear", "getHours", "getMinutes", "getSeconds", "getMilliseconds",
    "optional.of", "optional.none", "optional.ofNonZeroValue", "hasValue",
    "value", "orValue", "or",
}  # fmt: skip
_KNOWN_FUNCTIONS = _BUILTINS | set(FUNCTIONS)
_NAMESPACES = {"math", "sets", "base64", "strings", "lists", "format", "ip", "optional"}


@dataclass(frozen=True)
class _Rule:
    program: Any
    ast: tuple
    transition: bool


@functools.lru_cache(maxsize=4096)
def _compiled(text: str) -> _Rule:
    """Parse, check references and compile; ``ValueError`` with the reason if not."""
    try:
        ast = parse(text)
    except ParseError as exc:
        raise ValueError(f"compilation failed: ERROR: <input>: {exc}") from None
    problem = _undeclared(ast)
    if problem:
        raise ValueError(
            f"compilation failed: ERROR: <input>: undeclared reference to '{problem}' (in container '')"
        )
    source = rewritten(ast) if needs_rewrite(ast) else text
    try:
        program = cel.compile(source)
    except Exception as exc:  # noqa: BLE001 - the library raises ValueError/RuntimeError
        raise ValueError(f"compilation failed: {exc}") from None
    uses_old = any(n[0] == "ident" and n[1] == "oldSelf" for n in walk(ast))
    return _Rule(program, ast, uses_old)


def _undeclared(
    node: Any, scope: frozenset = frozenset({"self", "oldSelf"})
) -> str | None:
    """The first identifier or function no declaration covers, or None."""
    if not (isinstance(node, tuple) and node and isinstance(node[0], str)):
        return None
    kind = node[0]
    if kind == "ident":
        return None if node[1] in scope else node[1]
    if kind == "macro":
        _, _, target, var, args = node
        return _undeclared(target, scope) or next(
            (p for a in args for p in [_undeclared(a, scope | {var})] if p), None
        )
    if kind == "call":
        _, name, target, args = node
        if (
            target is not None
            and target[0] == "ident"
            and target[1] in _NAMESPACES
            and target[1] not in scope
        ):
            name, target = f"{target[1]}.{name}", None
        if not name.startswith(("_", "!_", "-_", "@")) and name not in _KNOWN_FUNCTIONS:
            return name
        parts = ([target] if target is not None else []) + list(args)
        return next((p for a in parts for p in [_undeclared(a, scope)] if p), None)
    if kind in ("select", "index"):
        return _undeclared(node[1], scope) or (
            _undeclared(node[2], scope) if kind == "index" else None
        )
    if kind == "list":
        return next((p for a in node[1] for p in [_undeclared(a, scope)] if p), None)
    if kind == "map":
        return next(
            (
                p
                for k, v in node[1]
                for p in [_undeclared(k, scope) or _undeclared(v, scope)]
                if p
            ),
            None,
        )
    if kind == "cond":
        return next((p for a in node[1:] for p in [_undeclared(a, scope)] if p), None)
    return None


# -- on the CRD ------------------------------------------------------------------------


def compile_rules(schema: Schema, path: str) -> list[Cause]:
    """Causes for every ``x-kubernetes-validations`` rule of a CRD schema that
    kube would refuse (the CRD is refused)."""
    causes: list[Cause] = []
    contributions: list[tuple[str, float]] = []
    _check_node(schema, path, causes, contributions, 1, True, True)
    total = sum(c for _, c in contributions)
    if total > costs.TOTAL_LIMIT:
        for rule_path, contribution in contributions:
            if contribution > costs.TOTAL_LIMIT / 100:
                causes.append(
                    Cause(
                        "FieldValueForbidden",
                        "Forbidden: contributed to estimated rule & messageExpression cost total exceeding cost limit",
                        rule_path,
                    )
                )
        causes.append(
            Cause(
                "FieldValueForbidden",
                "Forbidden: "
                + costs.cost_message(
                    "x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema",
                    total,
                    costs.TOTAL_LIMIT,
                ),
                path,
            )
        )
    return causes


def _check_node(
    node: Any,
    where: str,
    causes: list[Cause],
    contributions: list[tuple[str, float]],
    cardinality: int,
    correlatable: bool,
    root: bool = False,
) -> None:
    if not isinstance(node, dict):
        return
    shape = costs.shape_of_schema(node, root=root)
    for index, rule in enumerate(node.get("x-kubernetes-validations") or ()):
        at = f"{where}.x-kubernetes-validations[{index}]"
        if (
            not isinstance(rule, dict)
            or not isinstance(rule.get("rule"), str)
            or not rule["rule"]
        ):
            causes.append(Cause("FieldValueRequired", "Required value", f"{at}.rule"))
            continue
        text = rule["rule"]
        try:
            compiled = _compiled(text)
        except ValueError as exc:
            causes.append(
                Cause(
                    "FieldValueInvalid",
                    f"Invalid value: {_quote(text)}: {exc}",
                    f"{at}.rule",
                )
            )
            continue
        if compiled.transition and not correlatable:
            causes.append(
                Cause(
                    "FieldValueInvalid",
                    f"Invalid value: {_quote(text)}: oldSelf cannot be used on the uncorrelatable portion of the schema within {where}",
                    f"{at}.rule",
                )
            )
        env = {"self": shape, "oldSelf": shape}
        cost, _ = costs.estimate(compiled.ast, env)
        if cost > costs.PER_RULE_LIMIT:
            causes.append(
                Cause(
                    "FieldValueForbidden",
                    "Forbidden: "
                    + costs.cost_message(
                        "estimated rule cost", cost, costs.PER_RULE_LIMIT
                    ),
                    f"{at}.rule",
                )
            )
        message_expression = rule.get("messageExpression")
        if message_expression:
            try:
                message_rule = _compiled(message_expression)
            except ValueError as exc:
                causes.append(
                    Cause(
                        "FieldValueInvalid",
                        f"Invalid value: {_quote(message_expression)}: messageExpression {exc}",
                        f"{at}.messageExpression",
                    )
                )
            else:
                cost += costs.estimate(message_rule.ast, env)[0]
        contributions.append((f"{at}.rule", cost * cardinality))
        reason = rule.get("reason")
        if reason is not None and reason not in _REASONS:
            causes.append(
                Cause(
                    "FieldValueNotSupported",
                    f"Unsupported value: {_quote(str(reason))}: supported values: "
                    + ", ".join(f'"{r}"' for r in _REASONS),
                    f"{at}.reason",
                )
            )
        field_path = rule.get("fieldPath")
        if field_path and _resolve_field_path(field_path, node) is None:
            causes.append(
                Cause(
                    "FieldValueInvalid",
                    f"Invalid value: {_quote(field_path)}: fieldPath must be a valid path: does not refer to a valid field",
                    f"{at}.fieldPath",
                )
            )
    for key, sub in (node.get("properties") or {}).items():
        _check_node(
            sub,
            f"{where}.properties[{key}]",
            causes,
            contributions,
            cardinality,
            correlatable,
        )
    additional = node.get("additionalProperties")
    if isinstance(additional, dict):
        _check_node(
            additional,
            f"{where}.additionalProperties",
            causes,
            contributions,
            cardinality * shape.size,
            correlatable,
        )
    items = node.get("items")
    if isinstance(items, dict):
        _check_node(
            items,
            f"{where}.items",
            causes,
            contributions,
            cardinality * shape.size,
            correlatable and node.get("x-kubernetes-list-type") == "map",
        )


def _resolve_field_path(path: str, schema: Schema, prefix: str = "") -> str | None:
    found = field_path_target(path, schema, prefix)
    return found[0] if found else None


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


# -- on custom resources ---------------------------------------------------------------


class _Budget:
    def __init__(self) -> None:
        self.remaining = costs.RUNTIME_BUDGET
        self.stopped = False


def cel_causes(obj: Any, old: Any, schema: Schema, path: str = "") -> list[Cause]:
    """Run the ``x-kubernetes-validations`` rules of ``schema`` on ``obj`` (``old``
    on update). Does not mutate."""
    causes: list[Cause] = []
    _walk(obj, old, schema, path, causes, _Budget())
    return causes


def _walk(
    obj: Any, old: Any, schema: Schema, path: str, causes: list[Cause], budget: _Budget
) -> None:
    if budget.stopped or not isinstance(schema, dict) or obj is None:
        return
    rules = schema.get("x-kubernetes-validations") or ()
    if rules:
        _run_rules(rules, obj, old, schema, path, causes, budget)
    if isinstance(obj, dict):
        props = schema.get("properties") or {}
        additional = schema.get("additionalProperties")
        for key, value in obj.items():
            sub = props.get(key)
            at = f"{path}.{key}" if path else key
            if sub is None and isinstance(additional, dict):
                sub, at = additional, f"{path}[{key}]"
            if sub is not None:
                old_value = old.get(key) if isinstance(old, dict) else None
                _walk(value, old_value, sub, at, causes, budget)
    elif isinstance(obj, list) and isinstance(schema.get("items"), dict):
        keys = schema.get("x-kubernetes-list-map-keys") or []
        old_by_key = {}
        if schema.get("x-kubernetes-list-type") == "map" and isinstance(old, list):
            old_by_key = {
                _map_key(item, keys): item for item in old if isinstance(item, dict)
            }
        for index, item in enumerate(obj):
            old_item = (
                old_by_key.get(_map_key(item, keys))
                if isinstance(item, dict) and old_by_key
                else None
            )
            _walk(item, old_item, schema["items"], f"{path}[{index}]", causes, budget)


def _map_key(item: dict, keys: list[str]) -> tuple:
    return tuple(repr(item.get(k)) for k in keys)


def _run_rules(
    rules: list,
    obj: Any,
    old: Any,
    schema: Schema,
    path: str,
    causes: list[Cause],
    budget: _Budget,
) -> None:
    type_name = schema.get("type", "")
    self_value = to_cel(obj, schema)
    old_value = to_cel(old, schema) if old is not None else None
    shape = costs.shape_of_value(self_value)
    env = {
        "self": shape,
        "oldSelf": costs.shape_of_value(old_value) if old is not None else shape,
    }
    contexts: dict[bool, Any] = {}
    for rule in rules:
        text = rule.get("rule", "")
        try:
            compiled = _compiled(text)
        except ValueError as exc:
            causes.append(
                Cause(
                    "FieldValueInvalid",
                    f'Invalid value: "{type_name}": rule compile error: {exc}',
                    path,
                )
            )
            continue
        optional_old = bool(rule.get("optionalOldSelf"))
        if compiled.transition and old is None and not optional_old:
            continue
        expected, _ = costs.estimate(compiled.ast, env)
        if expected > costs.PER_CALL_LIMIT:
            causes.append(
                Cause(
                    "FieldValueInvalid",
                    f"Invalid value: \"{type_name}\": 'operation cancelled: actual cost limit exceeded': "
                    f"no further validation rules will be run due to call cost exceeds limit for rule: {_rule_string(rule)}",
                    path,
                )
            )
            budget.stopped = True
            return
        if expected > budget.remaining:
            causes.append(
                Cause(
                    "FieldValueInvalid",
                    f'Invalid value: "{type_name}": validation failed due to running out of cost budget, '
                    "no further validation rules will be run",
                    path,
                )
            )
            budget.stopped = True
            return
        budget.remaining -= expected
        wants_optional = optional_old and compiled.transition
        if wants_optional not in contexts:
            # One context per node and kind of oldSelf: building one registers
            # every library function, which costs more than most rules.
            variables: dict[str, Any] = {"self": self_value}
            if wants_optional:
                variables["oldSelf"] = (
                    cel.OptionalValue.of(old_value)
                    if old is not None
                    else cel.OptionalValue.none()
                )
            elif old is not None:
                variables["oldSelf"] = old_value
            contexts[wants_optional] = new_context(variables)
        context = contexts[wants_optional]
        try:
            ok = compiled.program.execute(context)
        except Exception as exc:  # noqa: BLE001 - evaluation errors are the rule's failure
            causes.append(
                Cause(
                    "FieldValueInvalid",
                    f'Invalid value: "{type_name}": {_eval_error(exc, rule)}',
                    path,
                )
            )
            continue
        if ok is True:
            continue
        message = _message(rule, context, env, budget)
        field = path
        if rule.get("fieldPath"):
            field = _resolve_field_path(rule["fieldPath"], schema, path) or path
        causes.append(_field_error(rule.get("reason"), field, type_name, message))


def _message(rule: dict, context: Any, env: dict, budget: _Budget) -> str:
    """``messageExpression`` if it gives a usable string, else the message."""
    default = rule.get("message", "").strip() or f"failed rule: {_rule_string(rule)}"
    expression = rule.get("messageExpression")
    if not expression:
        return default
    try:
        compiled = _compiled(expression)
        expected, _ = costs.estimate(compiled.ast, env)
        if expected > costs.PER_CALL_LIMIT or expected > budget.remaining:
            return default
        budget.remaining -= expected
        value = compiled.program.execute(context)
    except Exception:  # noqa: BLE001 - kube falls back to the static message
        return default
    if not isinstance(value, str) or not value.strip() or "\n" in value.strip():
        return default
    return value.strip()


def _field_error(reason: str | None, field: str, type_name: str, message: str) -> Cause:
    """kube's ``fieldErrorForReason``."""
    if reason == "FieldValueForbidden":
        return Cause(reason, f"Forbidden: {message}", field)
    if reason == "FieldValueRequired":
        return Cause(reason, f"Required value: {message}", field)
    if reason == "FieldValueDuplicate":
        return Cause(reason, f'Duplicate value: "{type_name}"', field)
    return Cause("FieldValueInvalid", f'Invalid value: "{type_name}": {message}', field)


def _rule_string(rule: dict) -> str:
    return (rule.get("message") or "").strip() or rule.get("rule", "").strip()


_PYTHON_FAILURE = re.compile(
    r"Python function call failed: (\w+): (.*?)(?:\. Check function arguments|$)", re.S
)


def _eval_error(exc: Exception, rule: dict) -> str:
    """An evaluation error in cel-go's words."""
    text = str(exc)
    failure = _PYTHON_FAILURE.search(text)
    if failure:
        kind, text = failure.groups()
        if kind == "TypeError":
            exc = TypeError(text)
        elif kind == "KeyError":
            exc = KeyError(text.strip("'\""))
    if isinstance(exc, TypeError) or "no such overload" in text:
        return (
            "'no such overload': call arguments did not match a supported operator, "
            f"function or macro signature for rule: {_rule_string(rule)}"
        )
    if isinstance(exc, KeyError):
        text = f"no such key: {exc.args[0] if exc.args else ''}"
    elif isinstance(exc, ZeroDivisionError):
        text = "division by zero"
    elif isinstance(exc, OverflowError):
        text = "integer overflow"
    return f"{text} evaluating rule: {_rule_string(rule)}"
