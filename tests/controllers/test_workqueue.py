"""The work table (``kapi.controllers.workqueue``): what the runtime promises
every controller, after client-go's workqueue: a key runs in one place at a
time, a request during a run is never lost, a killed worker's lease runs out,
errors back off and keep their hints, ``requeue_after`` comes back later."""

from __future__ import annotations

from django.db import connection

from kapi.controllers import workqueue


def _ask(controller: str, key: str = "ns/a", hints: tuple[str, ...] = ()) -> None:
    workqueue.request([(controller, key, "", "", "ns", "a", "")], hints=list(hints))


def _claim(controller: str, limit: int = 10):
    return workqueue.claim(limit, [controller], only=True)


def _lease_runs_out(item) -> None:
    """What time does to a lease: here at once (the worker was killed)."""
    with connection.cursor() as cur:
        cur.execute(
            "UPDATE kapi_work_item SET claimed_until = now() - interval '1 second' WHERE id = %s",
            [item.id],
        )


def _row(item):
    with connection.cursor() as cur:
        cur.execute(
            "SELECT generation, attempts, hints, due > now(), claimed_until IS NULL"
            " FROM kapi_work_item WHERE id = %s",
            [item.id],
        )
        return cur.fetchone()


def test_a_key_is_claimed_by_one_worker_until_its_lease_runs_out(controller) -> None:
    _ask(controller)
    (first,) = _claim(controller)
    assert first.key == "ns/a" and first.attempts == 1
    assert _claim(controller) == [], "a leased key is not claimed again"
    _lease_runs_out(first)
    (second,) = _claim(controller)
    assert second.id == first.id and second.holder != first.holder
    workqueue.finish([first])  # the killed worker's late finish
    assert _row(second) is not None, "a lost lease cannot finish the next holder's run"
    workqueue.release([first])
    assert _claim(controller) == [], "nor release the next holder's claim"
    workqueue.finish([second])
    assert _row(second) is None


def test_a_request_during_a_run_keeps_the_key_for_another_pass(controller) -> None:
    _ask(controller, hints=("push",))
    (item,) = _claim(controller)
    assert item.hints == ["push"]
    _ask(controller, hints=("drift",))
    workqueue.finish([item])
    (again,) = _claim(controller)
    assert again.id == item.id and again.generation == item.generation + 1
    assert again.hints == ["drift"], "the new request's hints, not the finished run's"


def test_a_failed_run_backs_off_and_gives_its_hints_to_the_next(controller) -> None:
    _ask(controller, hints=("drift",))
    (item,) = _claim(controller)
    delay = workqueue.backoff(item.attempts, 1.0, 300.0)
    workqueue.requeue(item, delay, failed=True)
    generation, attempts, hints, later, free = _row(item)
    assert (attempts, hints, later, free) == (1, ["drift"], True, True)
    assert _claim(controller) == [], "not before its backoff"
    assert 0 < workqueue.next_wait() <= delay


def test_requeue_after_success_comes_back_later_with_attempts_reset(controller) -> None:
    _ask(controller)
    (item,) = _claim(controller)
    workqueue.requeue(item, 60.0)
    _generation, attempts, hints, later, free = _row(item)
    assert (attempts, hints, later, free) == (0, [], True, True)
    _ask(controller)
    assert len(_claim(controller)) == 1, "a new request does not wait for requeue_after"


def test_a_request_while_running_makes_requeue_after_due_at_once(controller) -> None:
    _ask(controller)
    (item,) = _claim(controller)
    _ask(controller)
    workqueue.requeue(item, 60.0)
    assert len(_claim(controller)) == 1


def test_extend_renews_only_the_holders_lease(controller) -> None:
    _ask(controller)
    (item,) = _claim(controller)
    _lease_runs_out(item)
    workqueue.extend([item])
    assert _claim(controller) == [], "extended: still leased"
    _lease_runs_out(item)
    (other,) = _claim(controller)
    _lease_runs_out(other)
    workqueue.extend([item])  # the old holder, too late
    assert len(_claim(controller)) == 1, "the old holder's extend did nothing"


def test_backoff_doubles_up_to_its_limit() -> None:
    assert [workqueue.backoff(n, 0.5, 60.0) for n in (1, 2, 3, 7, 20)] == [1.0, 2.0, 4.0, 60.0, 60.0]
