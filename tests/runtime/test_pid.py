"""``kapi.pid.current()`` is the process's id, in a forked child too (where
the audit file, the log buffer, the notifier and the caches must notice that
they were inherited)."""

from __future__ import annotations

import os

from kapi import pid


def test_the_id_of_this_process():
    assert pid.current() == os.getpid()


def test_a_forked_child_has_its_own():
    read, write = os.pipe()
    child = os.fork()
    if child == 0:
        try:
            os.write(write, f"{pid.current()} {os.getpid()}".encode())
        finally:
            os._exit(0)
    os.close(write)
    try:
        seen, actual = (int(x) for x in os.read(read, 100).split())
    finally:
        os.close(read)
        os.waitpid(child, 0)
    assert seen == actual == child
    assert pid.current() == os.getpid() != child
