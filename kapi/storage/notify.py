"""The post-commit wake-up hint: a coalesced ``NOTIFY kapi_change``.

A ``NOTIFY`` inside the write transaction would take PostgreSQL's global
notify lock at every commit and serialise all writers. Instead, a write that
has committed pokes this process's :class:`ChangeNotifier`, whose thread sends
one ``NOTIFY`` on its own connection for every burst of writes, at most once
per ``KAPI_NOTIFY_INTERVAL_MS`` (default 2 ms). The notification carries no
data: listeners read the change log up to the horizon, so a lost or late hint
only delays delivery (every listener also polls), never loses an event.
"""

from __future__ import annotations

import logging
import os
import threading
import time

from django.db import transaction

from kapi import pid
from kapi.storage.backend.statements import Statement, statement_rows

__all__ = ["CHANNEL", "ChangeNotifier", "close_notifier", "notify_change"]

CHANNEL = "kapi_change"

#: ``NOTIFY kapi_change`` as a statement that can be prepared, sent through
#: libpq (a few hundred a second per process under load).
_NOTIFY = Statement("notify", f"SELECT pg_notify('{CHANNEL}', '')")

log = logging.getLogger(__name__)


class ChangeNotifier:
    """One thread and one connection per process, started by the first write."""

    def __init__(self, interval: float | None = None) -> None:
        ms = float(os.environ.get("KAPI_NOTIFY_INTERVAL_MS", "2"))
        self.interval = interval if interval is not None else ms / 1000.0
        self._wanted = threading.Event()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._pid = 0
        self.sent = 0

    def poke(self) -> None:
        """Ask for a notification soon; cheap, never blocks on the database."""
        self._wanted.set()
        if self._thread is None or self._pid != pid.current():
            self._start()

    def _start(self) -> None:
        with self._lock:
            # After a fork (Celery prefork) the parent's thread does not exist here.
            if self._thread is not None and self._pid == pid.current():
                return
            self._pid = pid.current()
            self._stop = threading.Event()
            self._thread = threading.Thread(
                target=self._run, args=(self._stop,), name="kapi-notify", daemon=True
            )
            self._thread.start()

    def close(self, timeout: float = 5.0) -> None:
        """Send the pending notification (if any), then end the thread and close
        its connection; the next ``poke`` starts them again. For a process that
        writes only while it starts (``serve``'s in-process migrate)."""
        with self._lock:
            thread, stop = self._thread, self._stop
            if thread is None or self._pid != pid.current():
                return
            self._thread = None
            stop.set()
            self._wanted.set()
        thread.join(timeout)

    def _run(self, stop: threading.Event) -> None:
        import psycopg

        from kapi.storage.changes import conninfo

        conn = None
        try:
            while True:
                self._wanted.wait()
                self._wanted.clear()
                try:
                    if conn is None or conn.closed:
                        conn = psycopg.connect(conninfo("kapi-notify"), autocommit=True)
                    conn.wait(statement_rows(conn, _NOTIFY, []))
                    self.sent += 1
                except Exception:
                    log.warning("kapi: NOTIFY failed", exc_info=True)
                    conn = None
                    if not stop.is_set():
                        time.sleep(0.5)
                if stop.is_set():
                    return
                # Coalesce: writes during this pause share the next notification.
                time.sleep(self.interval)
        finally:
            if conn is not None:
                conn.close()


_notifier = ChangeNotifier()


def notify_change() -> None:
    """Call after a write: the hint goes out once the transaction has committed
    (at once in autocommit mode)."""
    transaction.on_commit(_notifier.poke)


def close_notifier() -> None:
    """End this process's notifier thread and its connection (``ChangeNotifier.close``)."""
    _notifier.close()
