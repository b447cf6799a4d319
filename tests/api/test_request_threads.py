"""``kapi.api.threads.RequestThreads``: what the bridge awaits for every API
request. A call runs off the loop in the caller's context, and its result or
its exception reaches the awaiting task; a task that stopped waiting is no
error for the thread, which goes on serving."""

from __future__ import annotations

import asyncio
import contextvars
import threading
import time

import pytest

from kapi.api.threads import RequestThreads

request_id = contextvars.ContextVar("request_id", default=None)


@pytest.fixture
def threads():
    pool = RequestThreads(3, name="test-request")
    yield pool
    pool.shutdown()


def test_calls_run_on_the_pool_in_the_callers_context(threads) -> None:
    def where(n):
        return n, request_id.get(), threading.current_thread().name

    async def main():
        async def one(n):
            request_id.set(f"r{n}")
            return await threads.call(where, n)

        return await asyncio.gather(*(one(n) for n in range(12)))

    answers = asyncio.run(main())
    assert [(n, rid) for n, rid, _ in answers] == [(n, f"r{n}") for n in range(12)]
    names = {name for *_, name in answers}
    assert names and names <= {f"test-request_{i}" for i in range(3)}
    assert threading.current_thread().name not in names


def test_an_exception_reaches_the_awaiting_task(threads) -> None:
    def fail():
        raise ValueError("bad body")

    async def main():
        with pytest.raises(ValueError, match="bad body"):
            await threads.call(fail)
        return await threads.call(lambda: "still serving")

    assert asyncio.run(main()) == "still serving"


def test_a_task_that_stopped_waiting_leaves_the_threads_serving(threads) -> None:
    release = threading.Event()
    finished = threading.Event()

    def slow():
        release.wait(5)
        finished.set()
        return "late"

    async def main():
        task = asyncio.ensure_future(threads.call(slow))
        await asyncio.sleep(0.05)
        task.cancel()
        release.set()
        with pytest.raises(asyncio.CancelledError):
            await task
        await asyncio.to_thread(finished.wait, 5)
        return await threads.call(lambda: 7)

    assert asyncio.run(main()) == 7
    assert finished.is_set()


def test_no_thread_before_the_first_call_and_none_after_shutdown() -> None:
    pool = RequestThreads(2, name="test-lazy")

    def running():
        return {t.name for t in threading.enumerate() if t.name.startswith("test-lazy")}

    assert running() == set()

    async def main():
        return await pool.call(lambda: 1)

    assert asyncio.run(main()) == 1
    assert running() == {"test-lazy_0", "test-lazy_1"}
    pool.shutdown()
    assert running() == set()


def test_requests_stuck_behind_slow_ones_get_another_thread() -> None:
    """Two threads both held by slow calls: a quick call still finishes
    (the pool grows while nothing finishes), and the extra thread stops
    once it has been idle."""
    pool = RequestThreads(2, name="test-grow", most=4, stall_seconds=0.02, idle_seconds=0.2)
    release = threading.Event()

    async def main():
        slow = [asyncio.ensure_future(pool.call(release.wait, 10)) for _ in range(2)]
        quick = await asyncio.wait_for(pool.call(lambda: "quick"), 5)
        grown = pool.size
        release.set()
        await asyncio.gather(*slow)
        return quick, grown

    try:
        quick, grown = asyncio.run(main())
        assert quick == "quick"
        assert grown > 2  # one more, or two if the first was slow to start
        deadline = time.monotonic() + 5
        while pool.size > 2 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert pool.size == 2
    finally:
        release.set()
        pool.shutdown()


def test_requests_that_flow_keep_the_pool_at_its_size() -> None:
    """Many quick calls, sixteen at a time, on two threads: the queue is never
    empty, but calls keep finishing, so no thread is added."""
    pool = RequestThreads(2, name="test-flow", most=8, stall_seconds=1.0)

    def work(n):
        return sum(range(200)) + n

    async def main():
        gate = asyncio.Semaphore(16)

        async def one(n):
            async with gate:
                return await pool.call(work, n)

        return await asyncio.gather(*(one(n) for n in range(400)))

    try:
        answers = asyncio.run(main())
        assert answers == [sum(range(200)) + n for n in range(400)]
        assert pool.size == 2
    finally:
        pool.shutdown()
