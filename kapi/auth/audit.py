"""The audit log: one ``audit.k8s.io/v1`` Event per line (JSON), at Metadata level.

Every mutating request and every denied (401/403) request is recorded with who
(user, impersonated user, source IPs, user agent), what (verb, URI, objectRef),
the response code and the authorization decision. Metadata level records no
request or response bodies, so Secret contents never reach the log.

The file is ``<data dir>/audit.log`` (``KAPI_AUDIT_LOG`` overrides it; ``-``
disables it), rotated by size as kube-apiserver's ``--audit-log-max*`` flags
(``KAPI_AUDIT_LOG_MAXSIZE``, ``KAPI_AUDIT_LOG_MAXBACKUP``,
``KAPI_AUDIT_LOG_MAXAGE``; :mod:`kapi.auth.auditlog`). Each event is one
``write`` on an ``O_APPEND`` descriptor, so lines from several worker processes
never interleave.
"""

from __future__ import annotations

import functools
import os
import threading
from datetime import UTC, datetime
from pathlib import Path

import orjson

from kapi.auth.auditlog import AuditFile, limits_from_env
from kapi.auth.user import UserInfo
from kapi.clock import rfc3339_micro

__all__ = ["MUTATING_VERBS", "audit_path", "event", "should_record", "write"]

MUTATING_VERBS = frozenset(
    {"create", "update", "patch", "delete", "deletecollection", "post", "put"}
)

_lock = threading.Lock()
_files: dict[Path, AuditFile] = {}


def audit_path() -> Path | None:
    """``KAPI_AUDIT_LOG`` (``-``: no audit log), else ``<data dir>/audit.log``."""
    return _audit_path(os.environ.get("KAPI_AUDIT_LOG"), os.environ.get("KAPI_DATA_DIR"))


@functools.lru_cache(maxsize=8)
def _audit_path(override: str | None, data_dir: str | None) -> Path | None:
    # Every write asks: made once per setting (one Path, whose hash is then kept).
    if override == "-":
        return None
    if override:
        return Path(override)
    from kapi.runtime import config

    return config.data_dir() / "audit.log"


def should_record(verb: str, code: int) -> bool:
    return verb in MUTATING_VERBS or code in (401, 403)


def _user(user: UserInfo | None) -> dict:
    if user is None:
        return {}
    out: dict = {"username": user.username, "groups": list(user.groups)}
    if user.uid:
        out["uid"] = user.uid
    if user.extra:
        out["extra"] = {k: list(v) for k, v in user.extra.items()}
    return out


def event(
    *,
    audit_id: str,
    received: datetime,
    request_uri: str,
    verb: str,
    user: UserInfo | None,
    impersonated: UserInfo | None,
    source_ips: list[str],
    user_agent: str,
    object_ref: dict | None,
    code: int,
    message: str = "",
    reason: str = "",
    annotations: dict | None = None,
) -> dict:
    """An ``audit.k8s.io/v1`` Event at stage ResponseComplete."""
    out: dict = {
        "kind": "Event",
        "apiVersion": "audit.k8s.io/v1",
        "level": "Metadata",
        "auditID": audit_id,
        "stage": "ResponseComplete",
        "requestURI": request_uri,
        "verb": verb,
        "user": _user(user),
        "sourceIPs": source_ips,
        "userAgent": user_agent,
    }
    if impersonated is not None:
        out["impersonatedUser"] = _user(impersonated)
    if object_ref:
        out["objectRef"] = object_ref
    status: dict = {"metadata": {}, "code": code}
    if code >= 400:
        status["status"] = "Failure"
        if message:
            status["message"] = message
        if reason:
            status["reason"] = reason
    out["responseStatus"] = status
    out["requestReceivedTimestamp"] = rfc3339_micro(received)
    out["stageTimestamp"] = rfc3339_micro(datetime.now(UTC))
    if annotations:
        out["annotations"] = annotations
    return out


def write(ev: dict) -> None:
    path = audit_path()
    if path is None:
        return
    file = _files.get(path)
    if file is None:
        with _lock:
            file = _files.setdefault(path, AuditFile(path, limits_from_env()))
    file.write(orjson.dumps(ev) + b"\n")
