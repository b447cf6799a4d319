"""The signing keys of ServiceAccount and user tokens, kept in the data directory.

``<data dir>/signing-keys/`` holds RSA private keys as ``key-<unix time>.pem``.
The newest signs; every key there verifies, so ``rotate()`` (``manage.py
rotate_signing_key``) adds a new key without invalidating tokens already
issued, and ``rotate(retire=True)`` removes the older keys, which ends all
their tokens. Each process re-reads the directory when it changes.

Tokens are JWTs (RS256) made with PyJWT: a maintained, widely reviewed
implementation that checks ``exp``/``nbf``/``aud`` and refuses ``alg: none``
and algorithm confusion, with ``cryptography`` doing the RSA.
"""

from __future__ import annotations

import base64
import hashlib
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import jwt
import orjson
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from kapi.auth.tokencache import VerifiedTokens
from kapi.runtime import config

__all__ = [
    "SigningKey",
    "decode",
    "encode",
    "key_stamps",
    "keys",
    "keys_dir",
    "rotate",
    "unverified_issuer",
]

ALGORITHM = "RS256"


@dataclass(frozen=True)
class SigningKey:
    kid: str
    private: rsa.RSAPrivateKey


def keys_dir() -> Path:
    return config.data_dir() / "signing-keys"


_lock = threading.Lock()
_cache: dict[Path, tuple[tuple, list[SigningKey]]] = {}


def _new_key_file(directory: Path) -> None:
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    name = f"key-{time.time_ns()}.pem"
    tmp = directory / f".{name}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(pem)
    os.replace(tmp, directory / name)


def _kid(key: rsa.RSAPrivateKey) -> str:
    der = key.public_key().public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return hashlib.sha256(der).hexdigest()[:43]


def key_stamps(directory: Path | None = None) -> tuple[tuple[str, int], ...]:
    """The key files' names and mtimes, in name order (oldest first): what
    changes when a key is added, retired or rewritten. One ``scandir`` and a
    ``stat`` per key (``Path.glob``'s selectors cost as much again: every JWT
    verification and every cache revision of the watch-revocation monitor
    asks). Raises ``OSError`` if the directory cannot be read
    (``FileNotFoundError``: no key yet)."""
    directory = keys_dir() if directory is None else directory
    with os.scandir(directory) as entries:
        return tuple(
            sorted(
                (e.name, e.stat().st_mtime_ns)
                for e in entries
                if e.name.startswith("key-") and e.name.endswith(".pem")
            )
        )


def _stamps(directory: Path) -> tuple[tuple[str, int], ...]:
    try:
        return key_stamps(directory)
    except FileNotFoundError:
        return ()


def keys() -> list[SigningKey]:
    """The keys, newest first; the first call creates one if there is none."""
    directory = keys_dir()
    stamp = _stamps(directory)
    if not stamp:
        with _lock:
            stamp = _stamps(directory)
            if not stamp:
                _new_key_file(directory)
                stamp = _stamps(directory)
    cached = _cache.get(directory)
    if cached and cached[0] == stamp:
        return cached[1]
    loaded = []
    for name, _ in reversed(stamp):
        private = serialization.load_pem_private_key((directory / name).read_bytes(), password=None)
        assert isinstance(private, rsa.RSAPrivateKey)
        loaded.append(SigningKey(_kid(private), private))
    _cache[directory] = (stamp, loaded)
    return loaded


def rotate(retire: bool = False) -> str:
    """Add a new signing key (it signs from now on); ``retire`` drops the others."""
    directory = keys_dir()
    old = _stamps(directory)
    _new_key_file(directory)
    if retire:
        for name, _ in old:
            (directory / name).unlink(missing_ok=True)
    return keys()[0].kid


def encode(claims: dict) -> str:
    key = keys()[0]
    return jwt.encode(
        claims, key.private, algorithm=ALGORITHM, headers={"kid": key.kid}
    )


_verified = VerifiedTokens()


def decode(token: str, audiences: list[str] | None, issuer: str) -> dict | None:
    """The verified claims, or None (bad signature, unknown key, expired, wrong
    issuer or no audience in common with ``audiences``). Verified claims are
    cached per token (``tokencache``); callers must not change them."""
    current = keys()
    cache_key = VerifiedTokens.key(token, audiences, issuer)
    cached = _verified.get(cache_key, {k.kid for k in current})
    if cached is not None:
        return cached
    try:
        header = jwt.get_unverified_header(token)
    except jwt.PyJWTError:
        return None
    for key in current:
        if header.get("kid") not in (None, key.kid):
            continue
        try:
            claims = jwt.decode(
                token,
                key.private.public_key(),
                algorithms=[ALGORITHM],
                audience=audiences,
                issuer=issuer,
                options={
                    "require": ["iss", "sub"],
                    "verify_aud": audiences is not None,
                },
            )
            _verified.put(cache_key, claims, key.kid)
            return claims
        except jwt.InvalidSignatureError:
            continue
        except jwt.PyJWTError:
            return None
    return None


def unverified_issuer(token: str) -> str | None:
    """The ``iss`` claim of a JWT-shaped token, unverified: only to pick which
    authenticator verifies it. None when the token is not a JWT. (Decoding the
    payload by hand is a tenth of what PyJWT's unverified decode costs.)"""
    if token.count(".") != 2:
        return None
    payload = token.split(".", 2)[1]
    try:
        claims = orjson.loads(
            base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4))
        )
    except (ValueError, orjson.JSONDecodeError):
        return None
    issuer = claims.get("iss") if isinstance(claims, dict) else None
    return issuer if isinstance(issuer, str) else None
