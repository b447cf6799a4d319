"""Kubernetes quantities (``resource.Quantity``: ``500m``, ``1Gi``, ``2e3``) as
exact fractions.

One reading for the three places that need it: the ``quantity`` format of
OpenAPI schemas (``PATTERN``), ResourceQuota's usage arithmetic
(``kapi.quota``) and CEL's ``quantity`` library (``kapi.cel.library``, which
imports the ``cel`` package: the quota admission must not pay for that in
every process that starts).
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

__all__ = ["PATTERN", "QuantityError", "canonical", "parse"]

#: A quantity's text: a signed decimal, then a binary or decimal suffix or an exponent.
PATTERN = re.compile(
    r"^([+-]?(?:\d+(?:\.\d*)?|\.\d+))(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][+-]?\d+)?$"
)
_BINARY = {"Ki": 1, "Mi": 2, "Gi": 3, "Ti": 4, "Pi": 5, "Ei": 6}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BINARY_SUFFIX = {power: suffix for suffix, power in _BINARY.items()}
_DECIMAL_SUFFIX = {exponent: suffix for suffix, exponent in _DECIMAL.items()}


class QuantityError(ValueError):
    """Not a quantity (the message is kube's)."""


def parse(text: str) -> Fraction:
    """The value of quantity ``text`` (surrounding blanks ignored)."""
    match = PATTERN.match(text.strip()) if isinstance(text, str) else None
    if not match:
        raise QuantityError(
            "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
        )
    number, suffix = match.group(1), match.group(2) or ""
    value = Fraction(number)
    if suffix in _BINARY:
        return value * 1024 ** _BINARY[suffix]
    if suffix in _DECIMAL:
        return value * Fraction(10) ** _DECIMAL[suffix]
    return value * Fraction(10) ** int(suffix[1:])


def canonical(value: Fraction) -> str:
    """A canonical form: binary suffixes for multiples of 1024 that are not
    multiples of 1000, decimal suffixes otherwise (``1500m``, ``2k``, ``1Gi``;
    zero is ``0``)."""
    if not value:
        return "0"
    sign = "-" if value < 0 else ""
    value = abs(value)
    if value.denominator == 1 and value and value.numerator % 1024 == 0 and value.numerator % 1000:
        n, power = value.numerator, 0
        while n % 1024 == 0 and power < 6:
            n, power = n // 1024, power + 1
        return f"{sign}{n}{_BINARY_SUFFIX[power]}"
    for exponent in (18, 15, 12, 9, 6, 3, 0, -3, -6, -9):
        scaled = value / Fraction(10) ** exponent
        if scaled.denominator == 1 and (scaled.numerator % 1000 or exponent == 18):
            return f"{sign}{scaled.numerator}{_DECIMAL_SUFFIX[exponent]}"
    # Below nano: kube rounds up to the nearest nano.
    return f"{sign}{math.ceil(value * 10**9)}n"
