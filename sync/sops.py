"""SOPS-encrypted manifests, decrypted with age keys, as Flux's ``spec.decryption``.

``spec.decryption: {provider: sops, secretRef: {name}}`` names a Secret of the
Sync's namespace (read with the Sync's identity) whose keys ending in
``.agekey`` hold age identities (``AGE-SECRET-KEY-1...``), one or more per
key. A rendered object with a top-level ``sops`` map is decrypted in memory:
the data key is age-decrypted (``pyrage``) from the ``sops.age`` entries, each
``ENC[AES256_GCM,data:…,iv:…,tag:…,type:…]`` value is opened with AES-GCM
bound to its path (``stringData:password:``), and the file's MAC (SHA-512 of
every value in document order, itself encrypted and bound to
``sops.lastmodified``) must match, so a value moved, swapped or dropped
by someone without the key is refused. The ``sops`` map is removed. Nothing
decrypted is written to disk or put in a message: errors name the object and
the recipients only.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from typing import Any

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from kapi import errors
from kapi.auth import access
from kapi.registry.catalog import catalog
from kapi.registry.store import Registry

__all__ = ["DecryptionError", "decrypt_objects", "identities"]

_ENC = re.compile(r"^ENC\[AES256_GCM,data:([^,]*),iv:([^,]*),tag:([^,]*),type:([a-z]+)\]$")
_KEY_SUFFIX = ".agekey"


class DecryptionError(Exception):
    """Objects could not be decrypted; ``messages`` names each (never a value)."""

    def __init__(self, messages: list[str]) -> None:
        super().__init__("; ".join(messages))
        self.messages = messages


def identities(namespace: str, spec: dict, user, registry: Registry | None = None) -> list:
    """The age identities of the Sync's ``spec.decryption.secretRef``, read as ``user``."""
    import pyrage

    decryption = spec.get("decryption") or {}
    name = (decryption.get("secretRef") or {}).get("name")
    if not name:
        return []
    rt = catalog().lookup("", "v1", "secrets")
    registry = registry or Registry()
    try:
        access.check(user, "get", rt, namespace, name)
        secret = registry.get(rt, namespace, name)
    except errors.StatusError as exc:
        raise DecryptionError([f"decryption Secret {name}: {exc.status.get('message', exc)}"]) from None
    found = []
    for key, value in (secret.get("data") or {}).items():
        if not key.endswith(_KEY_SUFFIX):
            continue
        text = base64.b64decode(value).decode(errors="replace")
        for line in text.splitlines():
            line = line.strip()
            if line.startswith("AGE-SECRET-KEY-"):
                try:
                    found.append(pyrage.x25519.Identity.from_str(line))
                except Exception:
                    raise DecryptionError([f"decryption Secret {name}: key {key} holds an invalid age identity"]) \
                        from None
    return found


def _armored(text: str) -> bytes:
    body = "".join(line.strip() for line in text.strip().splitlines() if not line.startswith("-----"))
    return base64.b64decode(body)


def _data_key(meta: dict, keys: list) -> bytes | None:
    import pyrage

    for entry in meta.get("age") or []:
        try:
            return pyrage.decrypt(_armored(str(entry.get("enc", ""))), keys)
        except Exception:  # not for these identities (or malformed): try the next entry
            continue
    return None


def _open(value: str, key: bytes, aad: str) -> tuple[bytes, str]:
    match = _ENC.match(value)
    if match is None:
        raise ValueError("not an ENC[AES256_GCM,...] value")
    data, iv, tag, kind = match.groups()
    plain = AESGCM(key).decrypt(base64.b64decode(iv), base64.b64decode(data) + base64.b64decode(tag), aad.encode())
    return plain, kind


def _typed(plain: bytes, kind: str) -> Any:
    text = plain.decode()
    if kind == "int":
        return int(text)
    if kind == "float":
        return float(text)
    if kind == "bool":
        return text == "True"
    return text


def _mac_bytes(value: Any) -> bytes:
    """A value as SOPS hashes it for the MAC."""
    if isinstance(value, bool):
        return b"True" if value else b"False"
    if isinstance(value, float):
        return repr(value).encode()
    if value is None:
        return b""
    return str(value).encode()


def _walk(node: Any, path: list[str], key: bytes, hashed: Any, only_encrypted: bool) -> Any:
    if isinstance(node, dict):
        return {k: _walk(v, [*path, str(k)], key, hashed, only_encrypted) for k, v in node.items()}
    if isinstance(node, list):
        return [_walk(item, path, key, hashed, only_encrypted) for item in node]
    if isinstance(node, str) and node.startswith("ENC[AES256_GCM,"):
        plain, kind = _open(node, key, ":".join(path) + ":")
        hashed.update(plain)
        return _typed(plain, kind)
    if not only_encrypted:
        hashed.update(_mac_bytes(node))
    return node


def _decrypt(obj: dict, keys: list) -> dict:
    meta = obj["sops"]
    key = _data_key(meta, keys)
    if key is None:
        recipients = ", ".join(str(e.get("recipient", "?")) for e in meta.get("age") or []) or "none"
        raise ValueError(f"no age key of the decryption Secret opens it (recipients: {recipients})")
    hashed = hashlib.sha512()
    body = {k: v for k, v in obj.items() if k != "sops"}
    try:
        out = _walk(body, [], key, hashed, bool(meta.get("mac_only_encrypted")))
        mac, _ = _open(str(meta.get("mac", "")), key, str(meta.get("lastmodified", "")))
    except (InvalidTag, ValueError, binascii.Error, UnicodeDecodeError):
        raise ValueError("a value or the MAC does not decrypt: the file was changed without its key") from None
    if mac.decode(errors="replace") != hashed.hexdigest().upper():
        raise ValueError("MAC mismatch: the file was changed without its key")
    return out


def decrypt_objects(objects: list[dict], keys: list) -> list[dict]:
    """``objects`` with every SOPS-encrypted one decrypted (in memory only)."""
    out, problems = [], []
    for obj in objects:
        if not isinstance(obj.get("sops"), dict):
            out.append(obj)
            continue
        subject = f"{obj.get('kind')} {(obj.get('metadata') or {}).get('name')}"
        if not keys:
            problems.append(f"{subject}: SOPS-encrypted, but the Sync has no spec.decryption with age keys")
            continue
        try:
            out.append(_decrypt(obj, keys))
        except ValueError as exc:
            problems.append(f"{subject}: cannot decrypt: {exc}")
    if problems:
        raise DecryptionError(problems)
    return out
