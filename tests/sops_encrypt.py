"""Encrypting a manifest as ``sops --encrypt --age RECIPIENT --encrypted-regex
'^(data|stringData)$'`` does, for the sync's SOPS tests (no sops binary on
PyPI). The format (AES-GCM bound to the value's path, the MAC over every value
in document order) was checked, while writing it, against a file SOPS 3.9
itself wrote."""

from __future__ import annotations

import base64
import hashlib
import os
import re
from typing import Any

import pyrage
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

__all__ = ["encrypt"]

_LASTMODIFIED = "2026-11-25T12:00:00Z"


def _seal(key: bytes, plain: bytes, aad: str, kind: str) -> str:
    iv = os.urandom(32)
    sealed = AESGCM(key).encrypt(iv, plain, aad.encode())
    data, tag = sealed[:-16], sealed[-16:]
    b64 = base64.b64encode
    return f"ENC[AES256_GCM,data:{b64(data).decode()},iv:{b64(iv).decode()},tag:{b64(tag).decode()},type:{kind}]"


def _armor(data: bytes) -> str:
    body = base64.b64encode(data).decode()
    lines = [body[i:i + 64] for i in range(0, len(body), 64)]
    return "\n".join(["-----BEGIN AGE ENCRYPTED FILE-----", *lines, "-----END AGE ENCRYPTED FILE-----"]) + "\n"


def encrypt(obj: dict, recipient: str, regex: str = r"^(data|stringData)$") -> dict:
    """A SOPS-encrypted copy of ``obj`` for age ``recipient``."""
    key = os.urandom(32)
    hashed = hashlib.sha512()

    def walk(node: Any, path: list[str], encrypting: bool) -> Any:
        if isinstance(node, dict):
            return {k: walk(v, [*path, k], encrypting or bool(re.search(regex, k))) for k, v in node.items()}
        if isinstance(node, list):
            return [walk(item, path, encrypting) for item in node]
        text = str(node).encode()
        hashed.update(text)
        return _seal(key, text, ":".join(path) + ":", "str") if encrypting else node

    out = walk(obj, [], False)
    recipient_key = pyrage.x25519.Recipient.from_str(recipient)
    out["sops"] = {
        "age": [{"recipient": recipient, "enc": _armor(pyrage.encrypt(key, [recipient_key]))}],
        "lastmodified": _LASTMODIFIED,
        "mac": _seal(key, hashed.hexdigest().upper().encode(), _LASTMODIFIED, "str"),
        "encrypted_regex": regex,
        "version": "3.9.0",
    }
    return out
