"""kube's CEL ``semver`` library (``apiserver/pkg/cel/library/semverlib.go``).

``semver(s)`` / ``semver(s, normalize)`` and ``isSemver(s)`` / ``isSemver(s,
normalize)``, with ``major()``, ``minor()``, ``patch()``, ``isGreaterThan``,
``isLessThan`` and ``compareTo``. Parsing is strict Semantic Versioning 2.0.0,
as the blang/semver package kube uses; normalization strips a leading ``v``,
leading zeros and fills a missing minor or patch with 0, as kube's
``normalizeAndParse`` does. Precedence follows semver.org (build metadata is
ignored). A version is a tagged map (``{"@semver": "1.2.3-rc.1"}``), as the
other opaque types of ``kapi.cel.library``.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["SEMVER", "SEMVER_FUNCTIONS", "compare", "is_semver_value"]

SEMVER = "@semver"

_NUMBER = r"(0|[1-9]\d*)"
_IDENT = r"(?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*)"
_PATTERN = re.compile(
    rf"^{_NUMBER}\.{_NUMBER}\.{_NUMBER}"
    rf"(?:-({_IDENT}(?:\.{_IDENT})*))?"
    r"(?:\+([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?$"
)


class SemverError(ValueError):
    """Not a semantic version (the message names the input, as blang/semver's)."""


def _parse(text: str) -> tuple[int, int, int, tuple[str, ...]]:
    match = _PATTERN.match(text)
    if match is None:
        raise SemverError(f"invalid semantic version: {text!r}")
    major, minor, patch, pre, _build = match.groups()
    return int(major), int(minor), int(patch), tuple(pre.split(".")) if pre else ()


def _normalized(text: str) -> str:
    """kube's ``normalizeAndParse`` before the strict parse."""
    text = text.removeprefix("v")
    parts = text.split(".", 2)
    for i, part in enumerate(parts):
        if len(part) > 1:
            part = part.lstrip("0")
            if not part or not part[0].isdigit():
                part = "0" + part
            parts[i] = part
    if len(parts) < 3:
        if any(c in parts[-1] for c in "+-"):
            raise SemverError("short version cannot contain PreRelease/Build meta data")
        parts += ["0"] * (3 - len(parts))
    return ".".join(parts)


def semver(text: Any, normalize: bool = False) -> dict:
    if not isinstance(text, str) or not isinstance(normalize, bool):
        raise TypeError("no such overload")
    if normalize:
        text = _normalized(text)
    _parse(text)
    return {SEMVER: text}


def is_semver(text: Any, normalize: bool = False) -> bool:
    if not isinstance(text, str) or not isinstance(normalize, bool):
        raise TypeError("no such overload")
    try:
        semver(text, normalize)
    except SemverError:
        return False
    return True


def is_semver_value(obj: Any) -> bool:
    return isinstance(obj, dict) and SEMVER in obj


def _v(obj: Any) -> tuple[int, int, int, tuple[str, ...]]:
    if not is_semver_value(obj):
        raise TypeError("no such overload")
    return _parse(obj[SEMVER])


def _identifier_key(ident: str) -> tuple[int, int, str]:
    # Numeric identifiers sort before alphanumeric ones, numerically.
    return (0, int(ident), "") if ident.isdigit() else (1, 0, ident)


def compare(a: Any, b: Any) -> int:
    """-1, 0 or 1 by semver.org precedence."""
    left, right = _v(a), _v(b)
    if left[:3] != right[:3]:
        return -1 if left[:3] < right[:3] else 1
    pre_a, pre_b = left[3], right[3]
    if pre_a == pre_b:
        return 0
    if not pre_a or not pre_b:
        return 1 if not pre_a else -1  # a release outranks its pre-releases
    for x, y in zip(pre_a, pre_b, strict=False):
        kx, ky = _identifier_key(x), _identifier_key(y)
        if kx != ky:
            return -1 if kx < ky else 1
    return (len(pre_a) > len(pre_b)) - (len(pre_a) < len(pre_b))


SEMVER_FUNCTIONS = {
    "semver": semver,
    "isSemver": is_semver,
    "major": lambda v: _v(v)[0],
    "minor": lambda v: _v(v)[1],
    "patch": lambda v: _v(v)[2],
}
