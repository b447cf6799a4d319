"""Random (version 4) UUIDs as text, from the OS's random bytes drawn in blocks.

Every create needs two: the object's ``uid`` and the request's id (its
``Audit-Id``). ``uuid.uuid4()`` asks the kernel for 16 bytes each time (a
``getrandom`` system call) and builds a ``UUID`` object to format; while a
create was served, the pair cost about 46 us of the request thread's CPU
(measured in context), a twentieth of the create. Here each thread draws
4 KiB from ``os.urandom`` at a time (one call per 256 ids) and writes the
text directly, as ``str(uuid.UUID(bytes=..., version=4))`` would.

The bytes come from the same source as ``uuid.uuid4()``'s and none is used
twice: a thread's block is its own, and a block is kept only by the process
that drew it (a forked child, whose id ``kapi.pid`` tells, draws afresh), so
a parent and its children never hand out the same id.
"""

from __future__ import annotations

import os
import threading

from kapi import pid

__all__ = ["uuid4"]

_BLOCK = 4096
_local = threading.local()


def uuid4() -> str:
    """A random UUID (RFC 4122 version 4), as text."""
    local = _local
    pos = getattr(local, "pos", _BLOCK)
    if pos >= _BLOCK or local.drawn_by != pid.current():
        local.block, local.drawn_by, pos = os.urandom(_BLOCK), pid.current(), 0
    local.pos = pos + 16
    raw = local.block[pos:pos + 16]
    h = raw.hex()
    # The version (4) in the 13th digit, the variant (0b10) in the top bits of the 17th.
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{'89ab'[(raw[8] >> 4) & 3]}{h[17:20]}-{h[20:]}"
