"""spec.decryption: a SOPS+age Secret is applied decrypted and never stored
decrypted on disk outside the object store; a key that cannot open it refuses
the push, naming the object and the recipients."""

from __future__ import annotations

import base64
import json
import os

import pyrage
from sops_encrypt import encrypt
from sync_gitops import Work, create, sync_namespace, unique, wait_for

API = "sync.kapi.dev/v1"
PLAIN = "correct-horse-battery-staple-7731"


def _files_containing(root, needles: list[bytes], skip: str) -> list[str]:
    found = []
    for dirpath, _dirs, files in os.walk(root):
        if skip in dirpath.split(os.sep):
            continue
        for name in files:
            path = os.path.join(dirpath, name)
            try:
                with open(path, "rb") as f:
                    data = f.read()
            except OSError:
                continue
            if any(n in data for n in needles):
                found.append(path)
    return found


def test_sops_secret_applied_decrypted_never_on_disk_and_wrong_key_refused(kapi_server, tmp_path):
    ns = unique("sops")
    identity = pyrage.x25519.Identity.generate()
    keyfile = f"# public key: {identity.to_public()}\n{identity}\n"
    create(kapi_server, *sync_namespace(ns),
           {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "sops-age", "namespace": ns},
            "data": {"age.agekey": base64.b64encode(keyfile.encode()).decode()}},
           {"apiVersion": API, "kind": "GitRepository", "metadata": {"name": "app", "namespace": ns}, "spec": {}},
           {"apiVersion": API, "kind": "Sync", "metadata": {"name": "app", "namespace": ns},
            "spec": {"sourceRef": {"name": "app"},
                     "decryption": {"provider": "sops", "secretRef": {"name": "sops-age"}}}})
    work = Work(kapi_server, ns, "app", tmp_path / ns)
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "db"},
              "stringData": {"password": PLAIN}}
    work.write("db.yaml", encrypt(secret, str(identity.to_public())))
    done = work.push("encrypted")
    assert PLAIN not in done.stderr
    head = work.git("rev-parse", "HEAD").stdout.strip()
    wait_for(lambda: kapi_server.kubectl("get", "sync", "app", "-n", ns, "-o",
                                         "jsonpath={.status.lastAppliedRevision}").stdout.endswith(head),
             what="the encrypted revision to be applied")
    live = json.loads(kapi_server.kubectl("get", "secret", "db", "-n", ns, "-o", "json").stdout)
    assert base64.b64decode(live["data"]["password"]).decode() == PLAIN
    assert "sops" not in live

    # Neither the plain value nor its base64 is anywhere in the data directory
    # but PostgreSQL's own files (repositories, checkouts, logs, audit).
    needles = [PLAIN.encode(), base64.b64encode(PLAIN.encode())]
    assert _files_containing(kapi_server.data_dir, needles, skip="postgres") == []

    # Encrypted for another key: refused at push time, naming object and recipient.
    stranger = pyrage.x25519.Identity.generate()
    work.write("other.yaml", encrypt({**secret, "metadata": {"name": "other"}}, str(stranger.to_public())))
    refused = work.push("wrong key", check=False)
    assert refused.returncode != 0
    assert (f"Sync {ns}/app: Secret other: cannot decrypt: no age key of the decryption Secret opens it "
            f"(recipients: {stranger.to_public()})") in refused.stderr
