"""``kapi.ids.uuid4``: the text of ``uuid.uuid4()``, from blocks of the OS's
random bytes, never the same id twice across threads or a fork."""

from __future__ import annotations

import os
import threading
import uuid

from kapi import ids


def test_the_text_is_what_uuid_writes_for_the_same_bytes(monkeypatch) -> None:
    block = os.urandom(ids._BLOCK)
    monkeypatch.setattr(ids.os, "urandom", lambda n: block[:n])
    monkeypatch.setattr(ids, "_local", threading.local())
    for start in range(0, ids._BLOCK, 16):
        made = ids.uuid4()
        assert made == str(uuid.UUID(bytes=block[start:start + 16], version=4))
        parsed = uuid.UUID(made)
        assert parsed.version == 4 and parsed.variant == uuid.RFC_4122


def test_threads_and_block_refills_never_repeat_an_id() -> None:
    per_thread = 3 * ids._BLOCK // 16  # three blocks each
    made: list[list[str]] = []

    def draw() -> None:
        made.append([ids.uuid4() for _ in range(per_thread)])

    threads = [threading.Thread(target=draw) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    everything = [i for batch in made for i in batch]
    assert len(everything) == 6 * per_thread
    assert len(set(everything)) == len(everything)


def test_a_forked_child_does_not_hand_out_its_parent_s_next_ids() -> None:
    """The child inherits the parent's block half used; it must draw its own."""
    ids.uuid4()  # this thread's block is drawn and partly used
    count = 50
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: its ids to the parent, then out without cleanup
        try:
            os.write(write_end, "\n".join(ids.uuid4() for _ in range(count)).encode())
        finally:
            os._exit(0)
    os.close(write_end)
    chunks = []
    while chunk := os.read(read_end, 65536):
        chunks.append(chunk)
    os.close(read_end)
    os.waitpid(pid, 0)
    child = b"".join(chunks).decode().split("\n")
    parent = [ids.uuid4() for _ in range(count)]
    assert len(child) == count
    assert not set(child) & set(parent)
