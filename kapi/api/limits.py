"""Limits on decoded request bodies: nesting depth and YAML alias expansion.

A small YAML document can expand exponentially through aliases ("billion
laughs"); PyYAML shares the aliased objects, but everything after decoding
(deep copies, JSON encoding, storage) walks the expansion. ``check_yaml`` reads
the event stream (no recursion, nothing built) and refuses a document nested
deeper than ``MAX_DEPTH`` or whose aliases expand it to more than
``ALIAS_FACTOR`` times its literal size (plus ``ALIAS_ALLOWANCE`` nodes), as
go-yaml refuses "excessive aliasing". ``check_depth`` bounds decoded JSON.
"""

from __future__ import annotations

from typing import Any

import yaml

from kapi import errors

__all__ = ["ALIAS_ALLOWANCE", "ALIAS_FACTOR", "MAX_DEPTH", "check_depth", "check_yaml"]

MAX_DEPTH = 100
ALIAS_FACTOR = 10
ALIAS_ALLOWANCE = 10_000


def _too_deep() -> errors.StatusError:
    return errors.bad_request(
        f"the request body is nested deeper than {MAX_DEPTH} levels"
    )


def check_yaml(raw: bytes) -> None:
    """Raise a 400 ``StatusError`` for an alias bomb or too deep a document."""
    openers = raw.count(b"[") + raw.count(b"{") + raw.count(b"\n")
    if b"&" not in raw and openers < MAX_DEPTH:
        return  # no anchors and no room for deep nesting: nothing to count
    anchors: dict[str, int] = {}
    # Each frame: [anchor, expanded size so far]
    stack: list[list] = [[None, 0]]
    literal = 0
    try:
        for event in yaml.parse(raw, Loader=yaml.SafeLoader):
            if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
                literal += 1
                stack.append([event.anchor, 1])
                if len(stack) - 1 > MAX_DEPTH:
                    raise _too_deep()
            elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
                anchor, size = stack.pop()
                if anchor:
                    anchors[anchor] = size
                stack[-1][1] += size
            elif isinstance(event, yaml.ScalarEvent):
                literal += 1
                if event.anchor:
                    anchors[event.anchor] = 1
                stack[-1][1] += 1
            elif isinstance(event, yaml.AliasEvent):
                stack[-1][1] += anchors.get(event.anchor, 1)
            else:
                continue
            if (
                stack[0][1] + sum(f[1] for f in stack[1:])
                > ALIAS_FACTOR * literal + ALIAS_ALLOWANCE
            ):
                raise errors.bad_request("yaml: document contains excessive aliasing")
    except yaml.YAMLError:
        return  # the decoder reports syntax errors in its own words


def check_depth(doc: Any) -> None:
    """Raise a 400 ``StatusError`` if ``doc`` nests deeper than ``MAX_DEPTH``."""
    todo = [(doc, 0)]
    while todo:
        node, depth = todo.pop()
        if depth > MAX_DEPTH:
            raise _too_deep()
        if isinstance(node, dict):
            todo.extend((v, depth + 1) for v in node.values())
        elif isinstance(node, list):
            todo.extend((v, depth + 1) for v in node)
