"""Waking the lifecycle's feed after a write the control plane acts on
(``kapi.controlplane.watch``), once it has committed. Registered as a registry
write observer (``kapi.apps``); namespaces already wake the feed
(``kapi.lifecycle.wakeup``). The test is a name comparison first: every other
write costs one string compare."""

from __future__ import annotations

from kapi.controllers import feed
from kapi.controlplane import rootca
from kapi.controlplane.kubernetesservice import NAME
from kapi.controlplane.watch import is_part_of_service
from kapi.lifecycle.watch import FEED

__all__ = ["on_write"]


def on_write(rt, obj: dict, deleted: bool) -> None:
    meta = obj.get("metadata") or {}
    name = meta.get("name")
    if name == rootca.CONFIGMAP:
        if (rt.stored_group, rt.stored_resource) == ("", "configmaps"):
            feed.wake(FEED)
    elif name == NAME and is_part_of_service(
        rt.stored_group, rt.stored_resource, meta.get("namespace") or "", name
    ):
        feed.wake(FEED)
