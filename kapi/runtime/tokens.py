"""Static bearer tokens: kube-apiserver's ``--token-auth-file`` for kapi.

The file is ``<data dir>/tokens.csv`` (or ``KAPI_TOKEN_AUTH_FILE``), one user a
line, in kube-apiserver's CSV format::

    token,user,uid,"group1,group2"

At least three columns; the fourth, optional, is a comma-separated group list.
Blank lines are skipped, as are records with an empty token (as upstream).
``serve`` creates the file on first start with one admin token in
``system:masters``.

Every API process reads the file itself and re-reads it when it changes (mtime,
size and inode), so a token added to it works at once in all
workers without shared in-process state. A token the process knows is accepted
without looking at the file again for :data:`FRESHNESS_SECONDS` (a ``stat`` per
request, which hands the interpreter lock to another thread, was about 1% of a
create's CPU); a token it does not know always looks, so a new line works at
once, and a removed one stops working within that time (kube-apiserver reads
its ``--token-auth-file`` once, at start). A watch's permission re-check looks
at once (:func:`invalidate`).
"""

from __future__ import annotations

import contextlib
import csv
import fcntl
import functools
import hashlib
import hmac
import io
import logging
import os
import secrets
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from kapi.runtime import config

__all__ = [
    "ADMIN_GROUP",
    "ADMIN_USER",
    "TokenUser",
    "authenticate_token",
    "ensure_token_file",
    "ensure_user_token",
    "invalidate",
    "load_tokens",
    "parse_tokens",
    "token_file_path",
]

logger = logging.getLogger(__name__)

ADMIN_USER = "admin"
ADMIN_GROUP = "system:masters"
AUTHENTICATED_GROUP = "system:authenticated"


@dataclass(frozen=True)
class TokenUser:
    """The identity a token stands for (``user.Info`` in kube-apiserver)."""

    name: str
    uid: str
    groups: tuple[str, ...] = field(default=())


def token_file_path() -> Path:
    """``KAPI_TOKEN_AUTH_FILE`` if set, else ``<data dir>/tokens.csv``."""
    return _token_file_path(os.environ.get("KAPI_TOKEN_AUTH_FILE"), os.environ.get("KAPI_DATA_DIR"))


@functools.lru_cache(maxsize=8)
def _token_file_path(override: str | None, data_dir: str | None) -> Path:
    # Every request asks (bearer tokens): made once per setting.
    if override:
        return Path(override).resolve()
    return config.data_dir() / "tokens.csv"


def parse_tokens(text: str, *, source: str = "token file") -> dict[str, TokenUser]:
    """Parse token-file text; a record with fewer than three columns is an error."""
    tokens: dict[str, TokenUser] = {}
    for number, record in enumerate(csv.reader(io.StringIO(text)), start=1):
        if not record or all(not col.strip() for col in record):
            continue
        if len(record) < 3:
            raise ValueError(
                f"{source} must have at least 3 columns (token, user name, user uid),"
                f" found {len(record)} in record {number}"
            )
        token = record[0].strip()
        if not token:
            logger.warning("empty token in %s, record %d", source, number)
            continue
        if token in tokens:
            logger.warning("duplicate token in %s, record %d", source, number)
        groups: tuple[str, ...] = ()
        if len(record) >= 4:
            groups = tuple(g.strip() for g in record[3].split(",") if g.strip())
        tokens[token] = TokenUser(record[1].strip(), record[2].strip(), groups)
    return tokens


#: How long a known token is accepted without a ``stat`` of the file.
FRESHNESS_SECONDS = 0.25

# path -> (stat key, tokens, index by sha256 of the token); keyed by the
# path's text, which hashes without pathlib's work
_cache: dict[str, tuple[tuple[int, int, int], dict[str, TokenUser], dict]] = {}
_cache_lock = threading.Lock()
# path -> when the file was last looked at (time.monotonic)
_checked_at: dict[str, float] = {}


def invalidate() -> None:
    """Look at the file again on the next request (a watch's re-check)."""
    _checked_at.clear()


def load_tokens(path: Path | str) -> dict[str, TokenUser]:
    """The tokens in ``path``, re-read only when the file has changed."""
    return _load(Path(path))[0]


def _load(
    path: Path,
) -> tuple[dict[str, TokenUser], dict[bytes, tuple[str, TokenUser]]]:
    name = str(path)
    st = os.stat(name)
    key = (st.st_mtime_ns, st.st_size, st.st_ino)
    with _cache_lock:
        cached = _cache.get(name)
        if cached and cached[0] == key:
            _checked_at[name] = time.monotonic()
            return cached[1], cached[2]
    tokens = parse_tokens(path.read_text(), source=name)
    index = {_digest(t): (t, user) for t, user in tokens.items()}
    with _cache_lock:
        _cache[name] = (key, tokens, index)
        _checked_at[name] = time.monotonic()
    return tokens, index


def _recent_index(path: Path) -> dict[bytes, tuple[str, TokenUser]] | None:
    """The index as last read, if the file was looked at within
    ``FRESHNESS_SECONDS``; else None."""
    name = str(path)
    checked = _checked_at.get(name)
    if checked is None or time.monotonic() - checked >= FRESHNESS_SECONDS:
        return None
    cached = _cache.get(name)
    return cached[2] if cached else None


def authenticate_token(token: str) -> TokenUser | None:
    """The user for a bearer token, or None (unknown token, or no token file).

    The lookup is by SHA-256 of the token, so its timing reveals nothing useful
    about stored tokens; the final comparison is constant-time.
    """
    if not token:
        return None
    digest = _digest(token)
    path = token_file_path()
    recent = _recent_index(path)
    found = recent.get(digest) if recent is not None else None
    if found is None:
        # Not known, or not looked at lately: look at the file now.
        try:
            _, index = _load(path)
        except FileNotFoundError:
            return None
        except (OSError, ValueError):
            logger.exception("cannot read the token file")
            return None
        found = index.get(digest)
    if found is None or not hmac.compare_digest(found[0].encode(), token.encode()):
        return None
    return found[1]


def ensure_token_file(path: Path | None = None) -> str:
    """Create the token file with an admin token if missing; return an admin token."""
    return ensure_user_token(ADMIN_USER, path=path, groups=(ADMIN_GROUP,))


def ensure_user_token(
    name: str,
    *,
    path: Path | None = None,
    groups: tuple[str, ...] = (AUTHENTICATED_GROUP,),
) -> str:
    """The token of user ``name``, appending a new line for it if it has none."""
    path = path or token_file_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    with _locked(path):
        text = path.read_text() if path.exists() else ""
        for token, user in parse_tokens(text, source=str(path)).items():
            if user.name == name:
                return token
        token = secrets.token_urlsafe(32)
        line = _format_line(token, TokenUser(name, str(uuid.uuid4()), groups))
        if text and not text.endswith("\n"):
            text += "\n"
        _write_private(path, text + line)
        return token


def _format_line(token: str, user: TokenUser) -> str:
    out = io.StringIO()
    csv.writer(out, lineterminator="").writerow([token, user.name, user.uid])
    # The group list is always quoted, as in the kube-apiserver documentation.
    groups = ",".join(user.groups).replace('"', '""')
    return f'{out.getvalue()},"{groups}"\n'


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    # Two `kubeconfig --user` runs must not both append, nor lose each other's line.
    lock = path.with_name(path.name + ".lock")
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _write_private(path: Path, text: str) -> None:
    # Readers see the old or the new file, never half of one; mode 0600 from birth.
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()
