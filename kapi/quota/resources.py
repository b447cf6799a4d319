"""Resource lists: ``{name: quantity}`` as kube's ``pkg/quota/v1/resources.go``.

Quantities are parsed to exact fractions and printed in kube's canonical form
(``0``, ``500m``, ``252Mi``, ``2``); a list is a plain dict of fractions.
"""

from __future__ import annotations

from fractions import Fraction

from kapi.cel.library import CelError, parse_quantity, quantity_string

__all__ = [
    "ResourceList",
    "add",
    "exceeded",
    "fmt",
    "formatted",
    "mask",
    "parse",
    "parsed",
    "pretty",
    "remove_zeros",
    "subtract_non_negative",
]

ResourceList = dict[str, Fraction]


def parse(value) -> Fraction:
    """A quantity (string or number); an unparsable one counts as zero."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return Fraction(value)
    try:
        return parse_quantity(str(value))
    except CelError:
        return Fraction(0)


def fmt(value: Fraction) -> str:
    """kube's canonical string of a quantity."""
    return "0" if value == 0 else quantity_string(value)


def parsed(items: dict | None) -> ResourceList:
    return {k: parse(v) for k, v in (items or {}).items()} if isinstance(items, dict) else {}


def formatted(items: ResourceList) -> dict[str, str]:
    return {k: fmt(v) for k, v in sorted(items.items())}


def add(a: ResourceList, b: ResourceList) -> ResourceList:
    out = dict(a)
    for k, v in b.items():
        out[k] = out.get(k, Fraction(0)) + v
    return out


def subtract_non_negative(a: ResourceList, b: ResourceList) -> ResourceList:
    return {k: max(v - b.get(k, Fraction(0)), Fraction(0)) for k, v in a.items()}


def mask(items: ResourceList, names) -> ResourceList:
    names = set(names)
    return {k: v for k, v in items.items() if k in names}


def remove_zeros(items: ResourceList) -> ResourceList:
    return {k: v for k, v in items.items() if v != 0}


def exceeded(used: ResourceList, hard: ResourceList) -> list[str]:
    """The names whose usage is above a hard limit (kube's LessThanOrEqual)."""
    return sorted(k for k, v in used.items() if k in hard and v > hard[k])


def pretty(items: ResourceList) -> str:
    """kube's prettyPrint: ``name=quantity`` sorted by name, comma-joined."""
    return ",".join(f"{k}={fmt(items[k])}" for k in sorted(items))
