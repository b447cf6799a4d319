"""Bodies recorded from real kubectl decode to the JSON kubectl sends for them.

Each ``fixtures/<name>.bin`` is what ``kubectl create ... --dry-run=server`` sent
as ``application/vnd.kubernetes.protobuf``; ``<name>.json`` is ``kubectl create
... --dry-run=client -o json`` for the same command (see ``capture.py``). Both
sides are normalised by dropping ``null`` values and empty objects, because the
JSON printer writes ``creationTimestamp: null``, ``status: {}`` and
``resources: {}`` which carry no information (protobuf writes empty messages,
JSON writes empty structs; both decode to the same Go object).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kapi.protobuf import decode_object

FIXTURES = Path(__file__).resolve().parent / "fixtures"
CASES = sorted(path.stem for path in FIXTURES.glob("*.bin"))


def normalise(value: Any) -> Any:
    if isinstance(value, dict):
        items = {key: normalise(item) for key, item in value.items()}
        return {k: v for k, v in items.items() if v is not None and v != {}}
    if isinstance(value, list):
        return [normalise(item) for item in value]
    return value


def test_fixtures_cover_the_capture_cases() -> None:
    """Every capture case has a recorded body and JSON twin."""
    from tests.protobuf.capture import CASES as capture_cases

    assert sorted(capture_cases) == CASES
    for name in CASES:
        assert (FIXTURES / f"{name}.json").exists()


@pytest.mark.parametrize("name", CASES)
def test_kubectl_body_decodes_to_kubectl_json(name: str) -> None:
    """The decoded protobuf body equals kubectl's JSON for the same object."""
    body = (FIXTURES / f"{name}.bin").read_bytes()
    expected = json.loads((FIXTURES / f"{name}.json").read_text())
    assert body.startswith(b"k8s\x00")
    assert normalise(decode_object(body)) == normalise(expected)
