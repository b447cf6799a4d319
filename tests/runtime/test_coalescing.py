"""kapi.runtime.coalescing: what is held goes out in order, once, or not at all
after an abort; nothing waits beyond the loop's pass."""

from __future__ import annotations

import asyncio

from kapi.runtime.coalescing import HOLD_LIMIT, CoalescingTransport


class _Transport:
    def __init__(self) -> None:
        self.writes: list[bytes] = []
        self.closing = False
        self.aborted = False

    def write(self, data) -> None:
        assert not self.closing
        self.writes.append(bytes(data))

    def is_closing(self) -> bool:
        return self.closing

    def close(self) -> None:
        self.closing = True

    def abort(self) -> None:
        self.closing = self.aborted = True

    def get_write_buffer_size(self) -> int:
        return 0

    def get_extra_info(self, name, default=None):
        return ("127.0.0.1", 1) if name == "peername" else default


def _run(steps) -> _Transport:
    async def main():
        raw = _Transport()
        coalescing = CoalescingTransport(raw, asyncio.get_running_loop())
        await steps(coalescing, raw)
        return raw

    return asyncio.run(main())


def test_writes_of_one_pass_leave_as_one_write_when_the_pass_ends():
    async def steps(t, raw):
        t.write(b"HTTP/1.1 200 OK\r\n\r\n")
        t.write(memoryview(b"{}"))
        assert raw.writes == [] and t.get_write_buffer_size() == 21
        await asyncio.sleep(0)
        assert raw.writes == [b"HTTP/1.1 200 OK\r\n\r\n{}"]
        t.write(b"next")
        await asyncio.sleep(0)
        assert raw.writes[1:] == [b"next"]
        # Everything else is the transport's own.
        assert t.get_extra_info("peername") == ("127.0.0.1", 1)

    _run(steps)


def test_a_big_write_is_not_held_and_keeps_the_order():
    big = b"x" * (HOLD_LIMIT + 1)

    async def steps(t, raw):
        t.write(b"head")
        t.write(big)
        assert raw.writes == [b"head", big]
        t.write(big)
        assert raw.writes[2:] == [big]
        await asyncio.sleep(0)
        assert len(raw.writes) == 3

    _run(steps)


def test_close_sends_what_is_held_first_and_abort_drops_it():
    async def steps(t, raw):
        t.write(b"last words")
        t.close()
        assert raw.writes == [b"last words"] and raw.closing
        await asyncio.sleep(0)
        assert raw.writes == [b"last words"]

    _run(steps)

    async def aborted(t, raw):
        t.write(b"never")
        t.abort()
        await asyncio.sleep(0)
        assert raw.writes == [] and raw.aborted

    _run(aborted)


def test_nothing_is_written_to_a_transport_closed_meanwhile():
    async def steps(t, raw):
        t.write(b"late")
        raw.closing = True  # the peer went away before the pass ended
        await asyncio.sleep(0)
        assert raw.writes == []

    _run(steps)
