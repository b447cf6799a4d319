"""serve's SIGTERM/SIGINT handler only sets a flag (``_StopFlag``): it runs
between two bytecodes of the main thread, which may hold the lock of a
``threading.Event`` (whose ``set()`` then waited for it forever: serve hung
on SIGTERM with every child still running) or be writing to stdout. The main
thread says which signal stopped it, once."""

from __future__ import annotations

import io
import os
import signal
import threading
import time

from kapi.management.commands.serve import Command, _StopFlag


class _NoReentry(io.StringIO):
    """A stream that refuses a write while another is in progress, as
    CPython's buffered streams do from a signal handler."""

    def __init__(self) -> None:
        super().__init__()
        self.writing = False

    def write(self, text: str) -> int:
        if self.writing:
            raise RuntimeError("reentrant call")
        self.writing = True
        try:
            return super().write(text)
        finally:
            self.writing = False


def _command() -> tuple[Command, _NoReentry]:
    out = _NoReentry()
    command = Command(stdout=out, stderr=io.StringIO())
    command._stopping = _StopFlag()
    command._starting = False
    return command, out


def test_the_handler_writes_nothing_and_the_main_thread_says_it_once() -> None:
    command, out = _command()
    out.writing = True  # the signal lands inside a write of the main thread
    command._on_signal(signal.SIGTERM, None)
    out.writing = False
    assert command._stopping.is_set()
    assert out.getvalue() == ""
    command._say_stopping()
    command._say_stopping()
    assert out.getvalue() == "kapi: received SIGTERM, stopping\n"


def test_a_second_signal_changes_nothing() -> None:
    command, out = _command()
    command._on_signal(signal.SIGINT, None)
    command._on_signal(signal.SIGTERM, None)
    command._say_stopping()
    assert out.getvalue() == "kapi: received SIGINT, stopping\n"


def test_a_real_signal_ends_the_wait_within_its_timeout() -> None:
    command, _ = _command()
    previous = signal.signal(signal.SIGTERM, command._on_signal)
    try:
        threading.Timer(0.1, os.kill, (os.getpid(), signal.SIGTERM)).start()
        started = time.monotonic()
        while not command._stopping.wait(0.2):
            assert time.monotonic() - started < 5, "the signal never set the flag"
        assert command._stopping.take_signal() == signal.SIGTERM
    finally:
        signal.signal(signal.SIGTERM, previous)
