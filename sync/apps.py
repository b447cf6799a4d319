from django.apps import AppConfig


def _record_origin(rt, obj: dict, deleted: bool) -> None:
    """Writes of Syncs and GitRepositories: remember the request, so that the
    reconcile the change scan asks for carries its id (kapi.observability.origin)."""
    from kapi.observability import origin
    from sync.kinds import GROUP

    if rt.stored_group == GROUP and not deleted:
        origin.record(obj)


class SyncConfig(AppConfig):
    name = "sync"
    verbose_name = "GitOps sync"

    def ready(self) -> None:
        from kapi.registry.store import BEFORE_WRITE_OBSERVERS, WRITE_OBSERVERS
        from sync.healthwake import wake_waiting_sync
        from sync.scanwake import wake_scan_on_write

        # Before the write, so the change scan that reads it finds its request.
        if _record_origin not in BEFORE_WRITE_OBSERVERS:
            BEFORE_WRITE_OBSERVERS.append(_record_origin)
        # After the write: a status change of an object a Sync waits on wakes
        # its health check at once (the poll is only a safety net).
        if wake_waiting_sync not in WRITE_OBSERVERS:
            WRITE_OBSERVERS.append(wake_waiting_sync)
        # After the write: a change the sync acts on (a Sync's spec, drift of
        # what it applied) wakes its change scan at once.
        if wake_scan_on_write not in WRITE_OBSERVERS:
            WRITE_OBSERVERS.append(wake_scan_on_write)
