"""Kind registry: every message table, and which message each (apiVersion, kind) is.

Merges the per-group ``messages_*`` modules so the decoder has one place to look.
Only GA versions are listed: those are what kubectl's typed clients send.
"""

from __future__ import annotations

from kapi.protobuf import (
    messages_admissionregistration,
    messages_apiextensions,
    messages_apiregistration,
    messages_apps,
    messages_authentication,
    messages_authorization,
    messages_autoscaling,
    messages_batch,
    messages_certificates,
    messages_coordination,
    messages_core,
    messages_discovery,
    messages_events,
    messages_flowcontrol,
    messages_meta,
    messages_networking,
    messages_node,
    messages_policy,
    messages_rbac,
    messages_resource,
    messages_scheduling,
    messages_storage,
    messages_storagemigration,
)
from kapi.protobuf.schema import Message

__all__ = ["KINDS", "MESSAGES", "message_for_kind"]

_GROUPS = (
    messages_admissionregistration,
    messages_apiextensions,
    messages_apiregistration,
    messages_apps,
    messages_authentication,
    messages_authorization,
    messages_autoscaling,
    messages_batch,
    messages_certificates,
    messages_coordination,
    messages_core,
    messages_discovery,
    messages_events,
    messages_flowcontrol,
    messages_networking,
    messages_node,
    messages_policy,
    messages_rbac,
    messages_resource,
    messages_scheduling,
    messages_storage,
    messages_storagemigration,
)

MESSAGES: dict[str, Message] = dict(messages_meta.MESSAGES)
KINDS: dict[tuple[str, str], str] = {}
for _module in _GROUPS:
    MESSAGES.update(_module.MESSAGES)
    for _api_version, (_package, _kinds) in _module.KINDS.items():
        KINDS.update({(_api_version, kind): f"{_package}.{kind}" for kind in _kinds})


def message_for_kind(api_version: str, kind: str) -> str | None:
    """The message name of ``kind`` in ``api_version``, or None if not known.

    The meta/v1 options kinds (``DeleteOptions`` ...) are accepted under any
    apiVersion, since every group version registers them.
    """
    name = KINDS.get((api_version, kind))
    if name is None:
        name = messages_meta.ANY_VERSION_KINDS.get(kind)
    return name
