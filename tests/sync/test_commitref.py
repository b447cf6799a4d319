"""The commit a Sync's ``allow-prune`` or ``pin`` annotation names (sync.commitref)."""

import os

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kapi.settings")
django.setup()

from sync import history, pruneguard  # noqa: E402

SHA = "3f9c2a7b1d4e5f60718293a4b5c6d7e8f9012345"


def _meta(key: str, value: str) -> dict:
    return {"annotations": {key: value}}


def test_a_full_sha_or_a_7_digit_abbreviation_names_the_commit() -> None:
    for value in (SHA, SHA[:7], "  " + SHA[:12].upper() + "\n"):
        assert pruneguard.allowed(_meta(pruneguard.ALLOW_ANNOTATION, value), SHA), value
        assert history.pin_of(_meta(history.PIN_ANNOTATION, value)) == value.strip().lower()


def test_anything_else_names_no_commit() -> None:
    """Too short, not hex (a branch name, "true"), or another commit: no allow, no pin."""
    for value in ("", SHA[:6], "true", "main", "release-1", "3f9c2a7-dirty", "g" * 40):
        assert not pruneguard.allowed(_meta(pruneguard.ALLOW_ANNOTATION, value), SHA), value
        assert history.pin_of(_meta(history.PIN_ANNOTATION, value)) == "", value
    other = "4" + SHA[1:]
    assert not pruneguard.allowed(_meta(pruneguard.ALLOW_ANNOTATION, other[:10]), SHA)
    assert not pruneguard.allowed({}, SHA) and history.pin_of({}) == ""
