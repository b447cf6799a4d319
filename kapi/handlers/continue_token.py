"""Opaque ``continue`` tokens: the list's resourceVersion and the last key served.

Encoded like kube-apiserver's (base64 of ``{"v":"meta.k8s.io/v1","rv":N,"start":K}``),
so a token is only as opaque as kube's, and a tampered one is refused with 400.
"""

from __future__ import annotations

import base64
import binascii

import orjson

from kapi import errors

__all__ = ["decode_continue", "encode_continue"]

_VERSION = "meta.k8s.io/v1"


def encode_continue(revision: int, last_key: tuple[str, str]) -> str:
    namespace, name = last_key
    payload = {"v": _VERSION, "rv": revision, "start": f"{namespace}/{name}"}
    return base64.urlsafe_b64encode(orjson.dumps(payload)).decode().rstrip("=")


def decode_continue(token: str) -> tuple[int, tuple[str, str]]:
    """Returns (revision, key after which to continue); 400 if malformed."""

    def bad(why: str) -> errors.StatusError:
        return errors.bad_request(f"continue key is not valid: {why}")

    try:
        padded = token + "=" * (-len(token) % 4)
        payload = orjson.loads(base64.urlsafe_b64decode(padded.encode()))
    except (binascii.Error, ValueError, orjson.JSONDecodeError):
        raise bad("incorrect encoded start resourceVersion (version meta.k8s.io/v1)") from None
    if not isinstance(payload, dict) or payload.get("v") != _VERSION:
        raise bad("server does not recognize this encoded key")
    revision = payload.get("rv")
    start = payload.get("start")
    if not isinstance(revision, int) or isinstance(revision, bool) or revision < -1 or revision == 0:
        raise bad("incorrect encoded start resourceVersion (version meta.k8s.io/v1)")
    if not isinstance(start, str) or "/" not in start:
        raise bad("encoded start key is not valid")
    namespace, _, name = start.partition("/")
    if not name or "\x00" in start:
        raise bad("encoded start key is not valid")
    return revision, (namespace, name)
