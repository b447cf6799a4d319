"""Waking the workloads' feed after a write of a kind it watches, once it has
committed. Registered as a registry write observer (``kapi.apps``): one set
lookup per write; any other kind never touches the feed's flag."""

from __future__ import annotations

from kapi.controllers import feed
from kapi.workloads.watch import FEED, WATCHED

__all__ = ["on_write"]


def on_write(rt, obj: dict, deleted: bool) -> None:
    if (rt.stored_group, rt.stored_resource) in WATCHED:
        feed.wake(FEED)
