"""sync.sops against a file SOPS itself wrote (Flux's recorded test vector), and
the tampering it must refuse. In process: no server."""

from __future__ import annotations

import copy
import os
from pathlib import Path

import django
import pyrage
import pytest
import yaml

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kapi.settings")
django.setup()  # sync.sops imports the registry (no database is used here)

from sops_encrypt import encrypt  # noqa: E402

from sync import sops  # noqa: E402

DATA = Path(__file__).parent / "testdata"


def _vector() -> tuple[dict, list]:
    doc = yaml.safe_load((DATA / "flux-sops-age.yaml").read_text())
    key = next(line for line in (DATA / "flux-sops-age.agekey").read_text().splitlines()
               if line.startswith("AGE-SECRET-KEY-"))
    return doc, [pyrage.x25519.Identity.from_str(key)]


def test_a_file_sops_wrote_decrypts_and_its_mac_verifies():
    doc, keys = _vector()
    [out] = sops.decrypt_objects([doc], keys)
    assert out == {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "age"},
                   "stringData": {"key": "value"}}


def test_tampering_without_the_key_is_refused():
    doc, keys = _vector()
    renamed = copy.deepcopy(doc)
    renamed["metadata"]["name"] = "other"  # a clear value the MAC covers
    moved = copy.deepcopy(doc)
    moved["stringData"] = {"password": moved["stringData"]["key"]}  # a value moved to another key
    for bad in (renamed, moved):
        with pytest.raises(sops.DecryptionError) as caught:
            sops.decrypt_objects([bad], keys)
        assert "changed without its key" in str(caught.value)
        assert "value" not in str(caught.value).replace("a value or", "")


def test_a_wrong_key_names_the_object_and_the_recipients():
    doc, _ = _vector()
    other = pyrage.x25519.Identity.generate()
    with pytest.raises(sops.DecryptionError) as caught:
        sops.decrypt_objects([doc], [other])
    assert str(caught.value) == ("Secret age: cannot decrypt: no age key of the decryption Secret opens it "
                                 "(recipients: age1l44xcng8dqj32nlv6d930qvvrny05hglzcv9qpc7kxjc6902ma4qufys29)")


def test_the_test_encryptor_writes_what_the_decryptor_reads():
    identity = pyrage.x25519.Identity.generate()
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"},
              "stringData": {"a": "1", "b": "two"}}
    sealed = encrypt(secret, str(identity.to_public()))
    assert sealed["stringData"]["a"].startswith("ENC[AES256_GCM,") and sealed["metadata"] == {"name": "s"}
    assert sops.decrypt_objects([sealed], [identity]) == [secret]
