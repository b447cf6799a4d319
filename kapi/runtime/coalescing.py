"""One TLS record and one ``send`` per response instead of two.

uvicorn writes a response's status line and headers as soon as the ASGI app
sends ``http.response.start``, and its body on ``http.response.body``: two
``transport.write`` calls, and through the TLS transport two records, two
encryptions and two system calls, for an API answer whose body follows at
once. Under ``kbench create`` the header write alone took a tenth of the event
loop's samples (``py-spy --gil``), as much as the body's.

:class:`CoalescingTransport` stands between a connection's protocol and its
transport: small writes are held until the event loop's current pass ends
(``call_soon``) and then go out as one write, so headers and body leave
together. Nothing waits longer than that pass: a watch's headers still leave
before its first event (the stream's first await yields to the loop), and
every frame of a watch goes out in the pass it was written in. A write of more
than :data:`HOLD_LIMIT` bytes is not held (the bridge's 1 MiB slices): what
is held goes first, then it. ``close`` sends what is held first; ``abort``
drops it, as the transport's own ``abort`` drops its buffer.
"""

from __future__ import annotations

import asyncio

__all__ = ["HOLD_LIMIT", "CoalescingTransport"]

#: Writes up to this size wait for the rest of the loop's pass. Above it, the
#: copy that joining costs outweighs the write it saves.
HOLD_LIMIT = 64 * 1024


class CoalescingTransport:
    """``transport`` whose writes within one pass of ``loop`` are sent as one;
    everything else is the transport's own."""

    __slots__ = ("_held", "_loop", "_transport")

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self._transport = transport
        self._loop = loop
        self._held: list[bytes] | None = None

    def write(self, data) -> None:
        held = self._held
        if len(data) > HOLD_LIMIT:
            if held:
                self.flush()
            self._transport.write(data)
        elif held is None:
            self._held = [data]
            self._loop.call_soon(self.flush)
        else:
            held.append(data)

    def flush(self) -> None:
        """Send what is held now."""
        held, self._held = self._held, None
        if held and not self._transport.is_closing():
            self._transport.write(held[0] if len(held) == 1 else b"".join(held))

    def writelines(self, chunks) -> None:
        for chunk in chunks:
            self.write(chunk)

    def close(self) -> None:
        self.flush()
        self._transport.close()

    def abort(self) -> None:
        self._held = None
        self._transport.abort()

    def write_eof(self) -> None:
        self.flush()
        self._transport.write_eof()

    def get_write_buffer_size(self) -> int:
        held = self._held
        return self._transport.get_write_buffer_size() + (sum(map(len, held)) if held else 0)

    def __getattr__(self, name: str):
        return getattr(self._transport, name)
