"""Quantities as kube reads and prints them (``kapi.quantity``), shared by
schema formats, ResourceQuota and CEL."""

from __future__ import annotations

from fractions import Fraction

import pytest

from kapi import quantity


@pytest.mark.parametrize(("text", "value"), [
    ("1Gi", 1024**3), ("500m", Fraction(1, 2)), (" 2k ", 2000), ("1e3", 1000),
    ("-1.5", Fraction(-3, 2)), (".5M", 500_000), ("3n", Fraction(3, 10**9)),
])
def test_parse(text, value):
    assert quantity.parse(text) == value


@pytest.mark.parametrize("text", ["", "1Kb", "1 Gi", "Gi", "1.2.3", "0x10"])
def test_not_quantities(text):
    with pytest.raises(quantity.QuantityError, match="quantities must match"):
        quantity.parse(text)
    assert not quantity.PATTERN.match(text.strip())


@pytest.mark.parametrize(("value", "text"), [
    (Fraction(3, 2), "1500m"), (1024**3, "1Gi"), (2000, "2k"), (1536 * 1024**2, "1536Mi"),
    (0, "0"), (-5, "-5"), (Fraction(1, 10**10), "1n"), (10**21, "1000E"),
])
def test_canonical(value, text):
    assert quantity.canonical(Fraction(value)) == text
