"""A feed's wake flag (``kapi.wakeflag``): a burst of writes sends one task,
writes during a run send none, and no write is left without a run to read
it. Checked on the real PostgreSQL, a second connection standing in for the
run that holds the feed's advisory lock."""

from __future__ import annotations

import itertools
import threading

import psycopg
import pytest
from django.db import connection

from kapi.wakeflag import WakeFlag

_numbers = itertools.count()


class _Sent:
    """The task a flag enqueues, counting what was sent."""

    name = "test-feed-task"

    def __init__(self) -> None:
        self.sent = 0

    def delay(self) -> None:
        self.sent += 1


@pytest.fixture
def flag(database):
    sent = _Sent()
    number = next(_numbers)
    name = f"test-wake-{number}"
    flag = WakeFlag(name, lambda: sent, "a test feed", 0x7465_7374_0000_0000 | number)
    yield flag, sent
    with connection.cursor() as cur:
        cur.execute("DELETE FROM kapi_wake_flag WHERE name = %s", [name])


@pytest.fixture
def run_holder():
    """Another session: what a worker running the feed holds."""
    settings = connection.settings_dict
    conn = psycopg.connect(
        host=settings["HOST"], port=settings["PORT"] or None, dbname=settings["NAME"],
        user=settings["USER"], password=settings["PASSWORD"] or None, autocommit=True,
    )
    yield conn
    conn.close()


def test_a_burst_of_wakes_sends_one_task_until_the_run_clears_the_flag(flag) -> None:
    flag, sent = flag
    for _ in range(5):
        flag.wake()
    assert sent.sent == 1
    assert flag.wanted()
    flag.clear()  # the run reads
    assert not flag.wanted()
    flag.wake()
    assert sent.sent == 2, "a write after the read gets a fresh run"


def test_wakes_during_a_run_send_nothing_and_the_run_sees_them(flag, run_holder) -> None:
    flag, sent = flag
    run_holder.execute("SELECT pg_advisory_lock(%s)", [flag.lock_key])
    flag.clear()  # the run's read
    flag.wake()
    flag.wake()
    assert sent.sent == 0, "the run will look at the flag when it stops"
    run_holder.execute("SELECT pg_advisory_unlock(%s)", [flag.lock_key])
    assert flag.wanted(), "the run, having released its lock, finds the wake and runs again"


def test_a_wake_after_the_run_has_looked_sends_a_task(flag, run_holder) -> None:
    flag, sent = flag
    run_holder.execute("SELECT pg_advisory_lock(%s)", [flag.lock_key])
    flag.clear()
    run_holder.execute("SELECT pg_advisory_unlock(%s)", [flag.lock_key])
    assert not flag.wanted()  # the run stops: nothing came
    flag.wake()
    assert sent.sent == 1
    # The probe took the lock and gave it back: a run can start.
    assert run_holder.execute("SELECT pg_try_advisory_lock(%s)", [flag.lock_key]).fetchone()[0]


def test_a_flip_in_flight_is_waited_for_by_the_run_that_looks(flag, run_holder) -> None:
    """A writer that flipped the flag while the run held its lock sent
    nothing; if the run looks before that flip has committed, it must see it
    anyway (``wanted`` waits for the row), or the write would wait for the
    safety sweep."""
    flag, sent = flag
    flag.clear()
    with run_holder.transaction():
        run_holder.execute(
            "INSERT INTO kapi_wake_flag (name, wanted) VALUES (%s, true)"
            " ON CONFLICT (name) DO UPDATE SET wanted = true",
            [flag.name],
        )
        seen: list[bool] = []
        looker = threading.Thread(target=lambda: seen.append(_wanted_elsewhere(flag)))
        looker.start()
        looker.join(0.5)
        assert looker.is_alive(), "the look waits for the flip in flight"
    looker.join(10)
    assert seen == [True]


def _wanted_elsewhere(flag) -> bool:
    from django.db import connections

    try:
        return flag.wanted()
    finally:
        connections.close_all()
