"""Waking the quota controller after writes that change usage without
passing quota admission (registered as a registry write observer in
``kapi.apps``).

Deletions already wake the feed (``kapi.lifecycle.wakeup``), and creates and
updates in a namespace with a quota wake it from admission
(``kapi.quota.admission``). What is left: a ResourceQuota written (its spec,
or a status someone patched), and a pod reaching Succeeded or Failed (it stops
counting). Any other write costs one comparison.
"""

from __future__ import annotations

from kapi.controllers import feed
from kapi.quota.watch import FEED

__all__ = ["on_write"]


def on_write(rt, obj: dict, deleted: bool) -> None:
    if deleted or rt.stored_group != "":
        return
    resource = rt.stored_resource
    if resource == "resourcequotas" or (
        resource == "pods" and (obj.get("status") or {}).get("phase") in ("Succeeded", "Failed")
    ):
        feed.wake(FEED)
