"""Posting a Sync's failures and recoveries to the Alerts of its namespace
(``sync.alertapi``: Flux's Provider/Alert shape).

The reconcile records an Event when a Sync or GitRepository fails or
recovers (``sync.status.event``); ``enqueue`` hands it to a Celery task, so a
slow or dead receiver never holds a reconcile. ``deliver`` finds the
Alerts of the object's namespace whose ``eventSources`` name it (and whose
``eventSeverity`` takes a Warning, or also a Normal event), reads each
Provider's URL from the ``address`` key of its Secret, and posts Flux's
generic event JSON or a Slack-compatible message, 5 s at most each.

A tenant must not turn kapi into a client for addresses only the server
can reach: URLs are http(s) only, and a host that resolves to a loopback,
link-local (cloud metadata), unspecified or multicast address is refused
unless its network is listed in ``KAPI_ALERT_ALLOWED_NETWORKS``.
"""

from __future__ import annotations

import base64
import json
import logging
import urllib.error
import urllib.request
from datetime import UTC, datetime

from django.conf import settings

from kapi import errors
from kapi.registry.catalog import catalog
from kapi.registry.store import Registry
from sync import netallow

__all__ = ["deliver", "destination_allowed", "enqueue", "payload"]

log = logging.getLogger(__name__)
TIMEOUT = 5.0
_KINDS = ("Sync", "GitRepository")


def enqueue(obj: dict, type_: str, reason: str, message: str) -> None:
    """Queue the delivery of an Event about ``obj`` (a Sync or GitRepository)."""
    if obj.get("kind") not in _KINDS:
        return
    from sync.tasks import notify

    meta = obj["metadata"]
    revision = (obj.get("status") or {}).get("lastAttemptedRevision") or \
        ((obj.get("status") or {}).get("artifact") or {}).get("revision") or ""
    try:
        notify.delay(meta["namespace"], obj["kind"], meta["name"], meta.get("uid", ""), type_, reason,
                     message[:4096], revision)
    except Exception:  # a broker outage loses a notification, never a reconcile
        log.warning("cannot queue a notification for %s %s/%s", obj["kind"], meta["namespace"], meta["name"])


def destination_allowed(url: str) -> str | None:
    """Why ``url`` may not be posted to, or None when it may."""
    return netallow.refused(url, settings.KAPI_ALERT_ALLOWED_NETWORKS, "alerts")


def payload(provider: dict, kind: str, namespace: str, name: str, uid: str, type_: str, reason: str,
            message: str, revision: str) -> dict:
    """The body for ``provider``: Flux's event (generic) or a Slack message."""
    severity = "error" if type_ == "Warning" else "info"
    if (provider.get("spec") or {}).get("type") == "slack":
        spec = provider.get("spec") or {}
        body: dict = {
            "username": spec.get("username") or "kapi",
            "text": f"{kind} {namespace}/{name}: {reason}",
            "attachments": [{
                "color": "danger" if severity == "error" else "good",
                "author_name": f"{kind.lower()}/{name}.{namespace}",
                "title": reason,
                "text": message,
                "mrkdwn_in": ["text"],
                "fields": [{"title": "revision", "value": revision, "short": False}] if revision else [],
            }],
        }
        if spec.get("channel"):
            body["channel"] = spec["channel"]
        return body
    return {
        "involvedObject": {"apiVersion": "sync.kapi.dev/v1", "kind": kind, "namespace": namespace,
                           "name": name, "uid": uid},
        "severity": severity,
        "timestamp": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "message": message,
        "reason": reason,
        "metadata": {"revision": revision} if revision else {},
        "reportingController": "kapi-sync",
    }


def _selected(alert: dict, kind: str, name: str, type_: str) -> bool:
    spec = alert.get("spec") or {}
    if spec.get("suspend") or alert["metadata"].get("deletionTimestamp"):
        return False
    if spec.get("eventSeverity") == "error" and type_ != "Warning":
        return False
    return any(src.get("kind") == kind and src.get("name", "*") in ("*", name)
               for src in spec.get("eventSources") or [])


def _address(provider: dict, registry: Registry) -> str:
    ref = ((provider.get("spec") or {}).get("secretRef") or {}).get("name", "")
    secret = registry.get(catalog().lookup("", "v1", "secrets"), provider["metadata"]["namespace"], ref)
    value = (secret.get("data") or {}).get("address")
    return base64.b64decode(value).decode().strip() if value else ""


def deliver(namespace: str, kind: str, name: str, uid: str, type_: str, reason: str, message: str,
            revision: str) -> int:
    """Post the Event to every Alert of ``namespace`` that selects it; returns
    how many posts were answered 2xx (failures are logged, not retried)."""
    from sync.kinds import alert_type, provider_type

    registry = Registry()
    delivered = 0
    for alert in registry.list(alert_type(), namespace)["items"]:
        if not _selected(alert, kind, name, type_):
            continue
        ref = ((alert.get("spec") or {}).get("providerRef") or {}).get("name", "")
        where = f"Alert {namespace}/{alert['metadata']['name']}"
        try:
            provider = registry.get(provider_type(), namespace, ref)
            if (provider.get("spec") or {}).get("suspend"):
                continue
            url = _address(provider, registry)
        except errors.StatusError as exc:
            log.warning("%s: %s", where, exc.status.get("message"))
            continue
        refused = destination_allowed(url) if url else "its Secret has no address"
        if refused:
            log.warning("%s: provider %s: %s", where, ref, refused)
            continue
        body = json.dumps(payload(provider, kind, namespace, name, uid, type_, reason, message,
                                  revision)).encode()
        request = urllib.request.Request(url, data=body, method="POST",
                                         headers={"Content-Type": "application/json",
                                                  "User-Agent": "kapi-notification"})
        try:
            with urllib.request.urlopen(request, timeout=TIMEOUT) as response:  # noqa: S310 (checked above)
                delivered += 200 <= response.status < 300
        except (urllib.error.URLError, OSError, ValueError) as exc:
            log.warning("%s: provider %s: post failed: %s", where, ref, exc)
    return delivered
