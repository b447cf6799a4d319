"""``kapi.api.threads.RequestThreads``: what the bridge awaits for every API
request. A call runs off the loop in the caller's context, and its result or
its exception reaches the awaiting task; a task that stopped waiting is no
error for the thread, which goes on serving."""

from __future__ import annotations

import asyncio
import contextvars
import threading

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
