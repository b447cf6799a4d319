"""The client connection of the current ASGI request, so a watch can drop it.

A watcher whose client stopped reading is stuck in the server's ``send`` (the
socket and the write buffers are full) and cannot end itself. ``kapi.asgi``
binds the connection of every watch request here; the watch cache's overflow
check calls :func:`closer`'s function, which aborts the transport: buffered
bytes are discarded, the blocked ``send`` returns, and the server sees the
client as gone (no error logged). Servers that do not expose their transport
(anything but uvicorn) get no closer: such a watcher ends when its client reads
again and finds the stream closed.
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar, Token

__all__ = ["bind", "closer", "unbind"]

_abort: ContextVar[Callable[[], None] | None] = ContextVar("kapi_connection_abort", default=None)


def bind(send) -> Token:
    """Remember how to abort the connection that ``send`` writes to (uvicorn's
    request cycle keeps its transport); returns a token for :func:`unbind`."""
    transport = getattr(getattr(send, "__self__", None), "transport", None)
    abort = getattr(transport, "abort", None)
    return _abort.set(abort if callable(abort) else None)


def unbind(token: Token) -> None:
    _abort.reset(token)


def closer() -> Callable[[], None] | None:
    """The function that drops the current request's connection, if known."""
    return _abort.get()
