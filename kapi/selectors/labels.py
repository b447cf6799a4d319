"""Label selectors: kube's grammar, matching and canonical strings.

Port of apimachinery ``pkg/labels/selector.go`` (lexer, parser, Requirement)
and ``metav1.LabelSelectorAsSelector``::

    <selector>    ::= <requirement> | <requirement> "," <selector>
    <requirement> ::= [!] KEY [ <set-based> | <exact-match> | <ordering> ]
    <set-based>   ::= ( "in" | "notin" ) "(" VALUE { "," VALUE } ")"
    <exact-match> ::= ( "=" | "==" | "!=" ) VALUE
    <ordering>    ::= ( ">" | "<" ) INTEGER

Requirements are ANDed and kept sorted by key, so ``str()`` is canonical.
``!=`` and ``notin`` also match objects without the key; ``>``/``<`` match
only when the label parses as a 64-bit integer.
Storage renders them as SQL (``kapi.storage.selection``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kapi.selectors.errors import SelectorError
from kapi.validation import field as fe
from kapi.validation.names import is_qualified_name, is_valid_label_value

__all__ = [
    "DOES_NOT_EXIST",
    "DOUBLE_EQUALS",
    "EQUALS",
    "EXISTS",
    "GREATER_THAN",
    "IN",
    "LESS_THAN",
    "NOTHING",
    "NOT_EQUALS",
    "NOT_IN",
    "LabelSelector",
    "Requirement",
    "everything",
    "label_selector_from_dict",
    "label_selector_matches",
    "new_requirement",
    "parse_int64",
    "parse_label_selector",
]

# selection.Operator values, as kube spells them.
DOES_NOT_EXIST = "!"
DOUBLE_EQUALS = "=="
EQUALS = "="
EXISTS = "exists"
GREATER_THAN = "gt"
IN = "in"
LESS_THAN = "lt"
NOT_EQUALS = "!="
NOT_IN = "notin"

_BINARY_OPERATORS = [
    IN,
    NOT_IN,
    EQUALS,
    DOUBLE_EQUALS,
    NOT_EQUALS,
    GREATER_THAN,
    LESS_THAN,
]
_UNARY_OPERATORS = [EXISTS, DOES_NOT_EXIST]

_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
_GO_INT_RE = re.compile(r"[+-]?[0-9]+", re.ASCII)


def parse_int64(value: str) -> int | None:
    """``strconv.ParseInt(value, 10, 64)``: no spaces, no ``_``, no overflow."""
    if not _GO_INT_RE.fullmatch(value):
        return None
    number = int(value)
    return number if _INT64_MIN <= number <= _INT64_MAX else None


def _aggregate(messages: list[str]) -> str:
    """``utilerrors.Aggregate.Error()``: one message bare, several in brackets."""
    unique = list(dict.fromkeys(messages))
    return unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"


def _field_error(path: str, value: Any, detail: str) -> str:
    """``field.Invalid(path, value, detail).Error()``."""
    return f"{path}: {fe.invalid(path, value, detail).message}"


@dataclass(frozen=True)
class Requirement:
    """One ``key <operator> values`` term; build it with :func:`new_requirement`."""

    key: str
    operator: str
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        op = self.operator
        if op in (IN, EQUALS, DOUBLE_EQUALS):
            return self.key in labels and labels[self.key] in self.values
        if op in (NOT_IN, NOT_EQUALS):
            return self.key not in labels or labels[self.key] not in self.values
        if op == EXISTS:
            return self.key in labels
        if op == DOES_NOT_EXIST:
            return self.key not in labels
        if op in (GREATER_THAN, LESS_THAN):
            if self.key not in labels or len(self.values) != 1:
                return False
            have, want = (
                parse_int64(str(labels[self.key])),
                parse_int64(self.values[0]),
            )
            if have is None or want is None:
                return False
            return have > want if op == GREATER_THAN else have < want
        return False

    def __str__(self) -> str:
        op = self.operator
        if op == EXISTS:
            return self.key
        if op == DOES_NOT_EXIST:
            return "!" + self.key
        # kube sorts values on output without touching the requirement itself.
        values = ",".join(sorted(self.values))
        if op in (IN, NOT_IN):
            return f"{self.key} {op} ({values})"
        symbol = {GREATER_THAN: ">", LESS_THAN: "<"}.get(op, op)
        return f"{self.key}{symbol}{values}"


def new_requirement(
    key: str, operator: str, values: list[str] | tuple[str, ...], path: str = ""
) -> Requirement:
    """``labels.NewRequirement``: validate and build, or raise :class:`SelectorError`.

    ``path`` prefixes the field paths in messages (``key``, ``values[0]``), as
    ``field.WithPath`` does.
    """
    values = list(values)
    child = (lambda name: f"{path}.{name}") if path else (lambda name: name)
    errors: list[str] = []
    if msgs := is_qualified_name(key):
        errors.append(_field_error(child("key"), key, "; ".join(msgs)))
    values_path = child("values")
    if operator in (IN, NOT_IN):
        if not values:
            errors.append(
                _field_error(
                    values_path,
                    values,
                    "for 'in', 'notin' operators, values set can't be empty",
                )
            )
    elif operator in (EQUALS, DOUBLE_EQUALS, NOT_EQUALS):
        if len(values) != 1:
            errors.append(
                _field_error(
                    values_path,
                    values,
                    "exact-match compatibility requires one single value",
                )
            )
    elif operator in (EXISTS, DOES_NOT_EXIST):
        if values:
            errors.append(
                _field_error(
                    values_path,
                    values,
                    "values set must be empty for exists and does not exist",
                )
            )
    elif operator in (GREATER_THAN, LESS_THAN):
        if len(values) != 1:
            errors.append(
                _field_error(
                    values_path,
                    values,
                    "for 'Gt', 'Lt' operators, exactly one value is required",
                )
            )
        for i, value in enumerate(values):
            if parse_int64(value) is None:
                errors.append(
                    _field_error(
                        fe.index(values_path, i),
                        value,
                        "for 'Gt', 'Lt' operators, the value must be an integer",
                    )
                )
    else:
        supported = ", ".join(f'"{o}"' for o in _BINARY_OPERATORS + _UNARY_OPERATORS)
        errors.append(
            f"{child('operator')}: Unsupported value: {fe.render_value(operator)}: supported values: {supported}"
        )
    for i, value in enumerate(values):
        if msgs := is_valid_label_value(value):
            errors.append(
                _field_error(
                    fe.key(fe.index(values_path, i), key), value, "; ".join(msgs)
                )
            )
    if errors:
        raise SelectorError(_aggregate(errors))
    return Requirement(key, operator, tuple(values))


@dataclass(frozen=True)
class LabelSelector:
    """An AND of requirements, sorted by key; ``nothing=True`` matches no object."""

    requirements: tuple[Requirement, ...] = ()
    nothing: bool = False

    @property
    def empty(self) -> bool:
        """True when the selector does not restrict anything (kube's ``Empty()``)."""
        return not self.nothing and not self.requirements

    def matches(self, labels: Mapping[str, str] | None) -> bool:
        if self.nothing:
            return False
        labels = labels or {}
        return all(r.matches(labels) for r in self.requirements)

    def requires_exact(self, label: str) -> str | None:
        """The value ``label`` must have (``k=v``, ``k==v`` or ``k in (v)``), else None."""
        for r in self.requirements:
            if r.key == label:
                if r.operator in (EQUALS, DOUBLE_EQUALS, IN) and len(r.values) == 1:
                    return r.values[0]
                return None
        return None

    def add(self, *requirements: Requirement) -> LabelSelector:
        if self.nothing:
            return self
        return LabelSelector(
            tuple(sorted(self.requirements + requirements, key=lambda r: r.key))
        )

    def __str__(self) -> str:
        return ",".join(str(r) for r in self.requirements)


NOTHING = LabelSelector(nothing=True)


def everything() -> LabelSelector:
    return LabelSelector()


# ---------------------------------------------------------------- lexer

_T_ERROR = "error"
_T_EOS = "end of string"
_T_CLOSE = ")"
_T_COMMA = ","
_T_NOT = "!"
_T_DOUBLE_EQ = "=="
_T_EQ = "="
_T_GT = ">"
_T_ID = "identifier"
_T_IN = "in"
_T_LT = "<"
_T_NOT_EQ = "!="
_T_NOT_IN = "notin"
_T_OPEN = "("

_STRING_TO_TOKEN = {
    ")": _T_CLOSE,
    ",": _T_COMMA,
    "!": _T_NOT,
    "==": _T_DOUBLE_EQ,
    "=": _T_EQ,
    ">": _T_GT,
    "in": _T_IN,
    "<": _T_LT,
    "!=": _T_NOT_EQ,
    "notin": _T_NOT_IN,
    "(": _T_OPEN,
}
_SPECIAL = frozenset("=!(),><")
_WHITESPACE = frozenset(" \t\r\n")


def _lex(text: str) -> list[tuple[str, str]]:
    """Tokens as (kind, literal), ending with end-of-string.

    Like kube's byte lexer, a NUL character ends the input.
    """
    text = text.split("\0", 1)[0]
    tokens: list[tuple[str, str]] = []
    pos, n = 0, len(text)
    while True:
        while pos < n and text[pos] in _WHITESPACE:
            pos += 1
        if pos >= n:
            tokens.append((_T_EOS, ""))
            return tokens
        if text[pos] in _SPECIAL:
            # Longest run of special characters that still spells an operator.
            buffer, last = "", None
            while pos < n and text[pos] in _SPECIAL:
                if buffer + text[pos] in _STRING_TO_TOKEN:
                    buffer += text[pos]
                    last = (_STRING_TO_TOKEN[buffer], buffer)
                    pos += 1
                elif last is not None:
                    break
                else:
                    buffer += text[pos]
                    pos += 1
            tokens.append(
                last or (_T_ERROR, f"error expected: keyword found '{buffer}'")
            )
        else:
            start = pos
            while (
                pos < n and text[pos] not in _SPECIAL and text[pos] not in _WHITESPACE
            ):
                pos += 1
            word = text[start:pos]
            tokens.append((_STRING_TO_TOKEN.get(word, _T_ID), word))


# ---------------------------------------------------------------- parser


class _Parser:
    """Recursive descent over the token list, mirroring kube's ``Parser``."""

    def __init__(self, text: str, path: str) -> None:
        self.tokens = _lex(text)
        self.position = 0
        self.path = path

    def _token(self, at: int, values: bool) -> tuple[str, str]:
        kind, literal = self.tokens[at]
        # In a values context "in" and "notin" are ordinary identifiers.
        if values and kind in (_T_IN, _T_NOT_IN):
            kind = _T_ID
        return kind, literal

    def lookahead(self, values: bool = True) -> tuple[str, str]:
        return self._token(self.position, values)

    def consume(self, values: bool = True) -> tuple[str, str]:
        self.position += 1
        return self._token(self.position - 1, values)

    def parse(self) -> list[Requirement]:
        requirements: list[Requirement] = []
        while True:
            kind, literal = self.lookahead()
            if kind in (_T_ID, _T_NOT):
                try:
                    requirements.append(self.parse_requirement())
                except SelectorError as err:
                    raise SelectorError(
                        f"unable to parse requirement: {err.message}"
                    ) from None
                kind, literal = self.consume()
                if kind == _T_EOS:
                    return requirements
                if kind == _T_COMMA:
                    kind2, literal2 = self.lookahead()
                    if kind2 not in (_T_ID, _T_NOT):
                        raise SelectorError(
                            f"found '{literal2}', expected: identifier after ','"
                        )
                else:
                    raise SelectorError(
                        f"found '{literal}', expected: ',' or 'end of string'"
                    )
            elif kind == _T_EOS:
                return requirements
            else:
                raise SelectorError(
                    f"found '{literal}', expected: !, identifier, or 'end of string'"
                )

    def parse_requirement(self) -> Requirement:
        key, operator = self.parse_keyand_infer_operator()
        if operator in (EXISTS, DOES_NOT_EXIST):
            return new_requirement(key, operator, [], self.path)
        operator = self.parse_operator()
        if operator in (IN, NOT_IN):
            values = self.parse_values()
        else:
            values = self.parse_exact_value()
        # kube collects values in a set and lists them sorted.
        return new_requirement(key, operator, sorted(values), self.path)

    def parse_keyand_infer_operator(self) -> tuple[str, str]:
        operator = ""
        kind, literal = self.consume()
        if kind == _T_NOT:
            operator = DOES_NOT_EXIST
            kind, literal = self.consume()
        if kind != _T_ID:
            raise SelectorError(f"found '{literal}', expected: identifier")
        if msgs := is_qualified_name(literal):
            # kube validates with the parser's path, which is nil unless given: "<nil>".
            raise SelectorError(
                _field_error(self.path or "<nil>", literal, "; ".join(msgs))
            )
        if self.lookahead()[0] in (_T_EOS, _T_COMMA) and operator != DOES_NOT_EXIST:
            operator = EXISTS
        return literal, operator

    def parse_operator(self) -> str:
        kind, literal = self.consume(values=False)
        operator = {
            _T_IN: IN,
            _T_EQ: EQUALS,
            _T_DOUBLE_EQ: DOUBLE_EQUALS,
            _T_GT: GREATER_THAN,
            _T_LT: LESS_THAN,
            _T_NOT_IN: NOT_IN,
            _T_NOT_EQ: NOT_EQUALS,
        }.get(kind)
        if operator is None:
            raise SelectorError(
                f"found '{literal}', expected: {', '.join(_BINARY_OPERATORS)}"
            )
        return operator

    def parse_values(self) -> set[str]:
        kind, literal = self.consume()
        if kind != _T_OPEN:
            raise SelectorError(f"found '{literal}' expected: '('")
        kind, literal = self.lookahead()
        if kind in (_T_ID, _T_COMMA):
            values = self.parse_identifiers_list()
            if self.consume()[0] != _T_CLOSE:
                raise SelectorError(f"found '{literal}', expected: ')'")
            return values
        if kind == _T_CLOSE:  # "()" is the set holding the empty string
            self.consume()
            return {""}
        raise SelectorError(f"found '{literal}', expected: ',', ')' or identifier")

    def parse_identifiers_list(self) -> set[str]:
        values: set[str] = set()
        while True:
            kind, literal = self.consume()
            if kind == _T_ID:
                values.add(literal)
                kind2, literal2 = self.lookahead()
                if kind2 == _T_COMMA:
                    continue
                if kind2 == _T_CLOSE:
                    return values
                raise SelectorError(f"found '{literal2}', expected: ',' or ')'")
            if kind == _T_COMMA:
                # Empty entries ("(,a", "a,,b", "a,)") are the empty string.
                if not values:
                    values.add("")
                kind2, _ = self.lookahead()
                if kind2 in (_T_CLOSE, _T_COMMA):
                    values.add("")
                if kind2 == _T_CLOSE:
                    return values
                continue
            raise SelectorError(f"found '{literal}', expected: ',', or identifier")

    def parse_exact_value(self) -> set[str]:
        kind, _ = self.lookahead()
        if kind in (_T_EOS, _T_COMMA):
            return {""}
        kind, literal = self.consume()
        if kind == _T_ID:
            return {literal}
        raise SelectorError(f"found '{literal}', expected: identifier")


def parse_label_selector(text: str, path: str = "") -> LabelSelector:
    """Parse a ``labelSelector`` query parameter; raise :class:`SelectorError`."""
    requirements = _Parser(text, path).parse()
    return LabelSelector(tuple(sorted(requirements, key=lambda r: r.key)))


_EXPRESSION_OPERATORS = {
    "In": IN,
    "NotIn": NOT_IN,
    "Exists": EXISTS,
    "DoesNotExist": DOES_NOT_EXIST,
}


def label_selector_from_dict(selector: Mapping[str, Any] | None) -> LabelSelector:
    """``metav1.LabelSelectorAsSelector``: None selects nothing, ``{}`` everything.

    Raises :class:`SelectorError` with kube's message; callers validating a
    stored object's spec should use
    ``kapi.validation.selector.validate_label_selector`` for field causes.
    """
    if selector is None:
        return NOTHING
    match_labels = selector.get("matchLabels") or {}
    expressions = selector.get("matchExpressions") or []
    if not match_labels and not expressions:
        return everything()
    requirements: list[Requirement] = []
    for k, v in match_labels.items():
        requirements.append(new_requirement(k, EQUALS, [v]))
    for expr in expressions:
        operator = _EXPRESSION_OPERATORS.get(expr.get("operator", ""))
        if operator is None:
            raise SelectorError(
                f"{fe.render_value(str(expr.get('operator', '')))} is not a valid label selector operator"
            )
        requirements.append(
            new_requirement(
                expr.get("key", ""), operator, list(expr.get("values") or [])
            )
        )
    return LabelSelector().add(*requirements)


def label_selector_matches(selector: Mapping[str, Any] | None, labels: Mapping[str, str]) -> bool:
    """Whether a ``metav1.LabelSelector`` selects ``labels``; an invalid selector
    selects nothing (as kube's controllers treat one)."""
    try:
        return label_selector_from_dict(selector).matches(labels)
    except SelectorError:
        return False
