"""sync.sops: decryption, the MAC, and the tampering it must refuse. In
process: no server. Files come from tests/sops_encrypt.py, whose format was
checked once, while writing it, against a file SOPS 3.9 itself wrote (a public
test vector of Flux's, not kept here: fetched material stays out of this
repository)."""

from __future__ import annotations

import os

import django
import pyrage
import pytest

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kapi.settings")
django.setup()  # sync.sops imports the registry (no database is used here)

from sops_encrypt import encrypt  # noqa: E402

from sync import sops  # noqa: E402

IDENTITY = pyrage.x25519.Identity.generate()


def _sealed() -> dict:
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "age"},
              "stringData": {"key": "value"}}
    return encrypt(secret, str(IDENTITY.to_public()))


def test_tampering_without_the_key_is_refused():
    renamed = _sealed()
    renamed["metadata"]["name"] = "other"  # a clear value the MAC covers
    moved = _sealed()
    moved["stringData"] = {"password": moved["stringData"]["key"]}  # a value moved to another key
    for bad in (renamed, moved):
        with pytest.raises(sops.DecryptionError) as caught:
            sops.decrypt_objects([bad], [IDENTITY])
        assert "changed without its key" in str(caught.value)
        assert "value" not in str(caught.value).replace("a value or", "")


def test_a_wrong_key_names_the_object_and_the_recipients():
    other = pyrage.x25519.Identity.generate()
    with pytest.raises(sops.DecryptionError) as caught:
        sops.decrypt_objects([_sealed()], [other])
    assert str(caught.value) == ("Secret age: cannot decrypt: no age key of the decryption Secret opens it "
                                 f"(recipients: {IDENTITY.to_public()})")


def test_the_test_encryptor_writes_what_the_decryptor_reads():
    identity = pyrage.x25519.Identity.generate()
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"},
              "stringData": {"a": "1", "b": "two"}}
    sealed = encrypt(secret, str(identity.to_public()))
    assert sealed["stringData"]["a"].startswith("ENC[AES256_GCM,") and sealed["metadata"] == {"name": "s"}
    assert sops.decrypt_objects([sealed], [identity]) == [secret]
