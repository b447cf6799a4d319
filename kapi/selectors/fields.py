"""Field selectors: kube's ``f=v,g!=w`` grammar and matching (storage renders
them as SQL: ``kapi.storage.selection``).

Port of apimachinery ``pkg/fields/selector.go`` plus the apiserver's field
label conversion: a resource declares which fields are selectable
(``supported``: field name -> dotted path in the object) and any other field
is refused with ``field label not supported: <field>``.

Values may escape ``\\``, ``,`` and ``=`` with a backslash; nothing else
(``\\!`` is an invalid escape sequence, as in kube). A field missing from the
object reads as ``""``, so ``spec.nodeName=`` selects unscheduled pods, unless
the resource says otherwise (a boolean such as a node's ``spec.unschedulable``
reads as ``false``, as kube's field sets print Go's zero value).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kapi.selectors.errors import SelectorError

__all__ = [
    "FieldRequirement",
    "FieldSelector",
    "escape_value",
    "parse_field_selector",
    "read_field",
    "unescape_value",
]

_EQUALS = "="
_NOT_EQUALS = "!="
# "==" before "=" so it does not leave a leading "=" in the value.
_TERM_OPERATORS = ("!=", "==", "=")


def escape_value(value: str) -> str:
    """``fields.EscapeValue``: backslash-escape ``\\``, ``,`` and ``=``."""
    return value.replace("\\", "\\\\").replace(",", "\\,").replace("=", "\\=")


def unescape_value(value: str) -> str:
    """``fields.UnescapeValue``; raise :class:`SelectorError` on a bad escape."""
    if not any(c in value for c in "\\,="):
        return value
    out: list[str] = []
    in_slash = False
    for ch in value:
        if in_slash:
            if ch not in "\\,=":
                raise SelectorError(
                    f"invalid field selector: invalid escape sequence: \\{ch}"
                )
            out.append(ch)
            in_slash = False
        elif ch == "\\":
            in_slash = True
        elif ch in ",=":
            # Go prints the rune with %v, i.e. as its code point.
            raise SelectorError(
                f"invalid field selector: unescaped character in value: {ord(ch)}"
            )
        else:
            out.append(ch)
    if in_slash:
        raise SelectorError("invalid field selector: invalid escape sequence: \\")
    return "".join(out)


def _split_terms(text: str) -> list[str]:
    """Split on commas that are not backslash-escaped, keeping the escapes."""
    if not text:
        return []
    terms: list[str] = []
    start, in_slash = 0, False
    for i, ch in enumerate(text):
        if in_slash:
            in_slash = False
        elif ch == "\\":
            in_slash = True
        elif ch == ",":
            terms.append(text[start:i])
            start = i + 1
    terms.append(text[start:])
    return terms


def _split_term(term: str) -> tuple[str, str, str] | None:
    # The field name cannot be escaped: the first operator found splits the term.
    for i in range(len(term)):
        for op in _TERM_OPERATORS:
            if term.startswith(op, i):
                return term[:i], op, term[i + len(op) :]
    return None


def read_field(obj: Mapping[str, Any] | None, path: str, missing: str = "") -> str:
    """The value at a dotted ``path`` as kube's field sets render it.

    Missing or null reads as ``missing``; booleans as ``true``/``false``; numbers
    in decimal. That is also what ``#>>`` yields in PostgreSQL.
    """
    value: Any = obj
    for part in path.split("."):
        if not isinstance(value, Mapping) or part not in value:
            return missing
        value = value[part]
    if value is None:
        return missing
    if isinstance(value, bool):
        return "true" if value else "false"
    return value if isinstance(value, str) else str(value)


@dataclass(frozen=True)
class FieldRequirement:
    """``field = value`` or ``field != value``; ``path`` is where the value lives."""

    field: str
    operator: str
    value: str
    path: str
    #: What a missing field reads as.
    missing: str = ""

    def matches(self, obj: Mapping[str, Any] | None) -> bool:
        equal = read_field(obj, self.path, self.missing) == self.value
        return equal if self.operator == _EQUALS else not equal

    def __str__(self) -> str:
        return f"{self.field}{self.operator}{escape_value(self.value)}"


@dataclass(frozen=True)
class FieldSelector:
    """An AND of field requirements, in kube's (sorted-term) order."""

    requirements: tuple[FieldRequirement, ...] = ()

    @property
    def empty(self) -> bool:
        return not self.requirements

    def matches(self, obj: Mapping[str, Any] | None) -> bool:
        return all(r.matches(obj) for r in self.requirements)

    def requires_exact(self, field: str) -> str | None:
        """The value ``field`` is pinned to by a ``field=value`` term, else None."""
        for r in self.requirements:
            if r.field == field and r.operator == _EQUALS:
                return r.value
        return None

    def __str__(self) -> str:
        return ",".join(str(r) for r in self.requirements)


def parse_field_selector(
    text: str, supported: Mapping[str, str], missing: Mapping[str, str] | None = None
) -> FieldSelector:
    """Parse a ``fieldSelector`` query parameter for one resource.

    ``supported`` maps each selectable field to its dotted path in the object
    (usually itself); ``missing`` what a field reads as when absent, where not
    ``""``. Raises :class:`SelectorError` with kube's message.
    """
    terms = sorted(_split_terms(text))
    parsed: list[tuple[str, str, str]] = []
    for term in terms:
        if not term:
            continue
        split = _split_term(term)
        if split is None:
            raise SelectorError(
                f"invalid selector: '{text}'; can't understand '{term}'"
            )
        lhs, op, rhs = split
        parsed.append(
            (lhs, _NOT_EQUALS if op == _NOT_EQUALS else _EQUALS, unescape_value(rhs))
        )
    # kube parses everything first, then converts field labels (the transform).
    requirements: list[FieldRequirement] = []
    for lhs, op, value in parsed:
        if lhs not in supported:
            raise SelectorError(f"field label not supported: {lhs}")
        requirements.append(
            FieldRequirement(
                lhs, op, value, supported[lhs], (missing or {}).get(lhs, "")
            )
        )
    return FieldSelector(tuple(requirements))
