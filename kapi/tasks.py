"""Celery tasks of the core (thin: one call each)."""

from __future__ import annotations

from celery import shared_task
from django.conf import settings

__all__ = ["clear_expired_sessions", "compact_change_log"]


@shared_task(name="kapi.compact_change_log", acks_late=True, ignore_result=True)
def compact_change_log() -> None:
    """Compact the change log to the history window (run by beat)."""
    from kapi.observability.tasks import nothing_done
    from kapi.storage.compaction import compact

    if not compact(settings.KAPI_HISTORY_WINDOW_SECONDS)[1]:
        nothing_done()


@shared_task(name="kapi.clear_expired_sessions", acks_late=True, ignore_result=True)
def clear_expired_sessions() -> None:
    """Delete expired admin UI sessions (run by beat; Django never does it itself)."""
    from importlib import import_module

    import_module(settings.SESSION_ENGINE).SessionStore.clear_expired()
