"""The change notifier's thread: ``close`` sends what is pending, then ends the
thread and its connection (``serve`` keeps neither after its in-process migrate)."""

from __future__ import annotations


def test_close_sends_the_pending_notification_and_ends_the_thread(storage) -> None:
    import psycopg

    from kapi.storage.changes import conninfo
    from kapi.storage.notify import CHANNEL, ChangeNotifier

    notifier = ChangeNotifier(interval=0.01)
    with psycopg.connect(conninfo(), autocommit=True) as listener:
        listener.execute(f"LISTEN {CHANNEL}")
        notifier.poke()
        thread = notifier._thread
        notifier.close()
        assert thread is not None and not thread.is_alive()
        assert notifier.sent >= 1
        assert list(listener.notifies(timeout=5, stop_after=1))
        # A later write starts it again.
        notifier.poke()
        assert notifier._thread is not None and notifier._thread.is_alive()
        notifier.close()
        assert notifier._thread is None
    notifier.close()  # nothing to close: a no-op
