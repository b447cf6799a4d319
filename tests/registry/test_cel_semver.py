"""kube's CEL semver library (``semverlib.go``): strict parsing, kube's
normalization, semver.org precedence, and the methods shared with quantity."""

from __future__ import annotations

import cel
import pytest

from kapi.cel.library import new_context
from kapi.cel.parser import parse
from kapi.cel.rewrite import rewritten


def run(rule: str):
    return cel.compile(rewritten(parse(rule))).execute(new_context({}))


@pytest.mark.parametrize(
    ("rule", "expected"),
    [
        ("isSemver('1.0.0')", True),
        ("isSemver('0.1.0-alpha.1+build.5')", True),
        ("isSemver('hello')", False),
        ("isSemver('v1.0')", False),  # a leading v only with normalization
        ("isSemver('01.1.1')", False),  # leading zeros are not semver
        ("isSemver('1.0.0-01')", False),  # nor in numeric pre-release identifiers
        ("isSemver('v1.0', true)", True),
        ("isSemver('01.01.01', true)", True),
        ("isSemver('1.0-rc.1', true)", False),  # a short version cannot carry pre-release
        ("semver('01.01.01', true) == semver('1.1.1')", True),
        ("semver('v1.2', true).patch() == 0", True),
        ("semver('1.2.3').major() == 1 && semver('1.2.3').minor() == 2", True),
        ("semver('1.2.3').compareTo(semver('1.2.3'))", 0),
        ("semver('1.2.3').compareTo(semver('2.0.0'))", -1),
        ("semver('1.2.3').compareTo(semver('0.1.2'))", 1),
        ("semver('1.0.0-rc.1').isLessThan(semver('1.0.0'))", True),
        ("semver('1.0.0-alpha').isLessThan(semver('1.0.0-alpha.1'))", True),
        ("semver('1.0.0-alpha.1').isLessThan(semver('1.0.0-alpha.beta'))", True),
        ("semver('1.0.0-beta.2').isLessThan(semver('1.0.0-beta.11'))", True),
        ("semver('1.0.0-rc.1').isGreaterThan(semver('1.0.0-beta.11'))", True),
        ("semver('1.0.0+a').compareTo(semver('1.0.0+b'))", 0),  # build metadata ignored
        ("string(semver('v1.2', true))", "1.2.0"),
        # quantity keeps its own overloads of the shared method names
        ("quantity('1Gi').isGreaterThan(quantity('1000Mi'))", True),
        ("quantity('1').compareTo(quantity('1000m'))", 0),
    ],
)
def test_semver_library(rule, expected):
    assert run(rule) == expected


def test_semver_of_an_invalid_version_is_an_error():
    with pytest.raises(Exception, match="invalid semantic version"):
        run("semver('200K')")
