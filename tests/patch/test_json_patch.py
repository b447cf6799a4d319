"""RFC 6902: the public json-patch-tests suite passes through ``apply_json_patch``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kapi.patch import PatchError, apply_json_patch

SUITE = Path("/work/shared/testdata/json-patch-tests")
if not SUITE.exists():  # pragma: no cover - the suite may be vendored elsewhere
    SUITE = Path(__file__).parent / "json-patch-tests"


def _cases():
    for name in ("tests.json", "spec_tests.json"):
        path = SUITE / name
        if not path.exists():
            continue
        for i, case in enumerate(json.loads(path.read_text())):
            if "doc" not in case or case.get("disabled"):
                continue
            yield pytest.param(case, id=f"{name}:{i}:{case.get('comment', '')[:40]}")


@pytest.mark.parametrize("case", list(_cases()))
def test_suite_case(case):
    """Each case gives its expected document, or fails when an error is expected."""
    if "error" in case:
        with pytest.raises(PatchError):
            apply_json_patch(case["doc"], case["patch"])
        return
    result = apply_json_patch(case["doc"], case["patch"])
    if "expected" in case:
        assert result == case["expected"]


def test_original_is_not_mutated_on_failure():
    """A patch whose later op fails leaves the original untouched."""
    doc = {"a": 1}
    with pytest.raises(PatchError):
        apply_json_patch(
            doc,
            [
                {"op": "add", "path": "/b", "value": 2},
                {"op": "test", "path": "/a", "value": 9},
            ],
        )
    assert doc == {"a": 1}


def test_failed_test_names_the_path():
    with pytest.raises(PatchError, match="testing value /a failed"):
        apply_json_patch({"a": 1}, [{"op": "test", "path": "/a", "value": 2}])
