"""Celery tasks of the controller runtime: thin, named, acknowledged late.

Each calls one function; none returns anything (the work is in the
database). Retries only on PostgreSQL being briefly unreachable.
"""

from __future__ import annotations

from celery.signals import worker_ready
from django.db import InterfaceError, OperationalError

from kapi.celery import app
from kapi.controllers import feed, runner
from kapi.observability.tasks import nothing_done

__all__ = ["process_changes", "resync", "sweep", "work"]

_TRANSIENT = (OperationalError, InterfaceError)
_COMMON = dict(
    acks_late=True,
    autoretry_for=_TRANSIENT,
    retry_backoff=True,
    max_retries=5,
    ignore_result=True,
)


@app.task(name="kapi.controllers.process_changes", **_COMMON)
def process_changes(name: str) -> None:
    """Read feed ``name`` (woken by a write that matters to it)."""
    feed.catch_up(name)


@app.task(name="kapi.controllers.work", **_COMMON)
def work() -> None:
    """Reconcile a batch of due keys, then one long-running key (a Sync)."""
    claimed = runner.run_batch()
    claimed += runner.run_long()
    if not claimed:
        nothing_done()


@app.task(name="kapi.controllers.sweep", **_COMMON)
def sweep() -> None:
    if not runner.sweep():
        nothing_done()


@app.task(name="kapi.controllers.resync", **_COMMON)
def resync() -> None:
    if not runner.sweep(resync=True):
        nothing_done()


@worker_ready.connect
def _catch_up_on_start(**_) -> None:
    """A worker that starts sweeps once: timer messages may have gone with the
    previous worker or broker."""
    sweep.delay()
