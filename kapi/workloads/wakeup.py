"""Waking the workloads' feed after a write of a kind it watches, once it has
committed. Registered as a registry write observer (``kapi.apps``): one dict
lookup per write; any other kind never touches the feed's flag."""

from __future__ import annotations

from kapi.controllers import feed
from kapi.workloads.watch import FEED, WATCHED

__all__ = ["on_write"]

#: stored resource -> its stored group, for the watched kinds (no resource
#: name repeats among them).
_GROUP_OF = dict((resource, group) for group, resource in WATCHED)


def on_write(rt, obj: dict, deleted: bool) -> None:
    if _GROUP_OF.get(rt.stored_resource) == rt.stored_group:
        feed.wake(FEED)
