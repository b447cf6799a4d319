"""Opaque ``continue`` tokens: the list's resourceVersion and the last key served.

Encoded like kube-apiserver's (base64 of ``{"v":"meta.k8s.io/v1","rv":N,"start":K}``),
so a token is only as opaque as kube's, and a tampered one is refused with 400.

A page that said how many objects remain (``remainingItemCount``) also writes
that count into its token (``"remaining"``): the next page, read at the same
revision, holds the next of those objects, so what remains after it is that
count less its items, and no page after the first counts in the database (a
quarter of a page's time from PostgreSQL). A count that is not a non-negative
integer is ignored and counted again; a client that edits it misleads only
its own list's ``remainingItemCount``.
"""

from __future__ import annotations

import base64
import binascii

import orjson

from kapi import errors

__all__ = ["decode_continue", "encode_continue"]

_VERSION = "meta.k8s.io/v1"


def encode_continue(revision: int, last_key: tuple[str, str], remaining: int | None = None) -> str:
    namespace, name = last_key
    payload: dict = {"v": _VERSION, "rv": revision, "start": f"{namespace}/{name}"}
    if remaining is not None:
        payload["remaining"] = remaining
    return base64.urlsafe_b64encode(orjson.dumps(payload)).decode().rstrip("=")


def decode_continue(token: str) -> tuple[int, tuple[str, str], int | None]:
    """Returns (revision, key after which to continue, how many objects the
    page before said remain, if it said); 400 if malformed."""

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
    remaining = payload.get("remaining")
    if not isinstance(remaining, int) or isinstance(remaining, bool) or remaining < 0:
        remaining = None
    return revision, (namespace, name), remaining
