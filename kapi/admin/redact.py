"""Secrets in the admin: values hidden unless revealed, and every reveal logged.

A Secret's values show up in ``data``, ``stringData`` and in kubectl's
``last-applied-configuration`` annotation; all three are hidden. Revealing
needs the ``kapi_admin.reveal_secrets`` permission and writes a line to the
``kapi.admin.audit`` logger and an entry in the admin's action log.
"""

from __future__ import annotations

import copy
import logging
from typing import Any

from django.contrib.admin.models import CHANGE, LogEntry
from django.contrib.contenttypes.models import ContentType

from kapi.registry.resource import ResourceType

__all__ = ["HIDDEN", "is_secret", "log_reveal", "redact"]

HIDDEN = "(hidden)"
_LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"

audit = logging.getLogger("kapi.admin.audit")


def is_secret(rt: ResourceType) -> bool:
    return rt.stored_group == "" and rt.stored_resource == "secrets"


def redact(obj: dict[str, Any]) -> dict[str, Any]:
    """A copy of a Secret with its values replaced by ``(hidden, N chars)``."""
    obj = copy.deepcopy(obj)
    for field in ("data", "stringData"):
        values = obj.get(field)
        if isinstance(values, dict):
            obj[field] = {
                k: f"{HIDDEN[:-1]}, {len(v) if isinstance(v, str) else 0} chars)"
                for k, v in values.items()
            }
    annotations = (obj.get("metadata") or {}).get("annotations")
    if isinstance(annotations, dict) and _LAST_APPLIED in annotations:
        annotations[_LAST_APPLIED] = HIDDEN
    return obj


def log_reveal(user, rt: ResourceType, namespace: str, name: str, uid: str, why: str) -> None:
    """Record that ``user`` saw the values of a Secret (``why``: the page)."""
    from kapi.admin.models import KapiPermissions

    audit.warning(
        "secret revealed: user=%s secret=%s/%s uid=%s page=%s",
        user.get_username(), namespace, name, uid, why,
    )
    LogEntry.objects.create(
        user_id=user.pk,
        content_type=ContentType.objects.get_for_model(KapiPermissions),
        object_id=uid,
        object_repr=f"Secret {namespace}/{name}"[:200],
        action_flag=CHANGE,
        change_message=f"Revealed the values of Secret {namespace}/{name} ({why})",
    )
