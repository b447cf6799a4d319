"""The request threads: few while requests flow, more while they are stuck.

**Few.** Every thread of an API process runs Python under one interpreter
lock, and each database round trip hands the lock to another thread. With 16
threads serving a steady stream of writes on 2 cores, more of the CPU went to
those hand-offs than with 4: in alternating runs of ``kbench`` (c=16, fresh
servers), 4 threads per process served 15-25% more creates and updates per
second than 16 (``bench/README.md``, session 11). So an API process runs
requests on ``count`` threads (``KAPI_REQUEST_THREADS``, 4).

**More while stuck.** A few threads can all be held by slow requests (big
lists, a write waiting for a lock) while quick ones queue behind them. When
requests are waiting and no call has finished for ``stall_seconds``, the pool
starts one more thread, and again after each further stall, up to ``most``
(``KAPI_REQUEST_THREADS_MAX``, 16). A thread beyond ``count`` that has been
idle for ``idle_seconds`` stops. Under load that flows, calls finish every
millisecond or so and the pool stays at ``count``.

**One hop.** A call is one item on a ``SimpleQueue``; the thread that takes it
runs it and hands the outcome to the loop with one ``call_soon_threadsafe`` on
the awaiting future. ``loop.run_in_executor`` cost a ``concurrent.futures``
future (a ``Condition`` set, notified and waited on), the executor's idle
semaphore and an asyncio future chained to it: on uvloop with 16 threads, 33 us
of CPU per hop against 17 us.

The threads are daemons, started at the first call (a process that never
serves a request has none): at exit the server has already drained its
requests, and a thread stuck in one must not hold the process up.
"""

from __future__ import annotations

import asyncio
import contextvars
import itertools
import queue
import threading
from collections.abc import Callable
from typing import Any

__all__ = ["RequestThreads"]

#: No call finished for this long while requests wait: start another thread.
STALL_SECONDS = 0.05
#: A thread beyond the pool's ``count`` stops after this long without a call.
IDLE_SECONDS = 60.0


def _settle(future: asyncio.Future, ok: bool, value: Any) -> None:
    if future.cancelled():
        return
    if ok:
        future.set_result(value)
    else:
        future.set_exception(value)


class RequestThreads:
    def __init__(
        self,
        count: int,
        name: str = "kapi-request",
        *,
        most: int | None = None,
        stall_seconds: float = STALL_SECONDS,
        idle_seconds: float = IDLE_SECONDS,
    ) -> None:
        self.count = max(1, count)
        self.most = max(self.count, most or self.count)
        self.name = name
        self.stall_seconds = stall_seconds
        self.idle_seconds = idle_seconds
        self._calls: queue.SimpleQueue = queue.SimpleQueue()
        self._threads: set[threading.Thread] = set()
        self._lock = threading.Lock()
        self._numbers = itertools.count()
        self._started = False
        #: Calls finished so far: a stall is this number not moving.
        self._finished = 0
        #: The loop a stall check is scheduled on (one at a time).
        self._watching: asyncio.AbstractEventLoop | None = None

    def call(self, fn: Callable[..., Any], *args: Any) -> asyncio.Future:
        """Run ``fn(*args)`` in the caller's context on a request thread; the
        awaitable future of the running loop gets its result or exception."""
        if not self._started:
            self._start()
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        self._calls.put((loop, future, contextvars.copy_context(), fn, args))
        if len(self._threads) < self.most:
            self._watch(loop)
        return future

    @property
    def size(self) -> int:
        """Threads running now."""
        return len(self._threads)

    def shutdown(self) -> None:
        """Let every thread finish its call and stop (tests; servers just exit)."""
        with self._lock:
            threads = list(self._threads)
        for _ in threads:
            self._calls.put(None)
        for thread in threads:
            thread.join()
        self._started = False

    # -- growing and shrinking ----------------------------------------------------
    def _start(self) -> None:
        with self._lock:
            if self._started:
                return
            for _ in range(self.count):
                self._spawn(extra=False)
            self._started = True

    def _spawn(self, extra: bool) -> None:
        """One more thread (the lock held)."""
        thread = threading.Thread(
            target=self._serve, args=(extra,), name=f"{self.name}_{next(self._numbers)}", daemon=True
        )
        self._threads.add(thread)
        thread.start()

    def _watch(self, loop: asyncio.AbstractEventLoop) -> None:
        if self._watching is loop or loop.is_closed():
            return
        self._watching = loop
        loop.call_later(self.stall_seconds, self._check, loop, self._finished)

    def _check(self, loop: asyncio.AbstractEventLoop, finished_then: int) -> None:
        self._watching = None
        if self._calls.qsize() == 0:
            return  # nothing waits
        if self._finished == finished_then:
            with self._lock:
                if len(self._threads) < self.most:
                    self._spawn(extra=True)
        if len(self._threads) < self.most:
            self._watch(loop)

    # -- a thread --------------------------------------------------------------------
    def _serve(self, extra: bool) -> None:
        timeout = self.idle_seconds if extra else None
        try:
            while True:
                try:
                    item = self._calls.get(timeout=timeout)
                except queue.Empty:
                    return  # an extra thread nobody needed for a while
                if item is None:
                    return
                self._run(*item)
                del item
        finally:
            with self._lock:
                self._threads.discard(threading.current_thread())

    def _run(self, loop, future, context, fn, args) -> None:
        try:
            result = context.run(fn, *args)
        except BaseException as exc:  # noqa: BLE001 - handed to the awaiting task
            outcome = (False, exc)
        else:
            outcome = (True, result)
        self._finished += 1
        try:
            loop.call_soon_threadsafe(_settle, future, *outcome)
        except RuntimeError:
            pass  # the loop has closed: nobody awaits this answer any more
