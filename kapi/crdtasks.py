"""Celery tasks of the CRD cleanup finalizer (thin: names in, one call, nothing out).

A CRD written with a ``deletionTimestamp`` and the cleanup finalizer enqueues
its cleanup after the commit (``wake_cleanup_on_write``, a registry write
observer); a pass that leaves custom resources behind (their finalizers
pending) runs again after a short wait. A slow beat sweep is the safety net.
"""

from __future__ import annotations

import logging

from celery import shared_task
from django.db import transaction

from kapi.storage.errors import ResourceVersionConflict

__all__ = ["cleanup_crd", "sweep_crd_cleanup", "wake_cleanup_on_write"]

log = logging.getLogger(__name__)
#: Seconds between passes of a CRD whose custom resources are still going.
AGAIN_SECONDS = 1.0


@shared_task(
    name="kapi.crd.cleanup",
    acks_late=True,
    autoretry_for=(ResourceVersionConflict,),
    retry_backoff=True,
    max_retries=5,
)
def cleanup_crd(name: str) -> None:
    from kapi.kinds.crdcleanup import cleanup_crd as run

    if not run(name):
        cleanup_crd.apply_async((name,), countdown=AGAIN_SECONDS)


@shared_task(name="kapi.crd.sweep", acks_late=True)
def sweep_crd_cleanup() -> None:
    """Beat's safety net and trigger: enqueue a pass for every CRD being deleted,
    and give CRDs waiting for names those another CRD released since."""
    from kapi.kinds.crdcleanup import crds_to_clean_up
    from kapi.kinds.crdnames import reconcile_waiting
    from kapi.observability.tasks import nothing_done

    names = crds_to_clean_up()
    for name in names:
        cleanup_crd.delay(name)
    if not reconcile_waiting() and not names:
        nothing_done()


def wake_cleanup_on_write(rt, obj: dict, deleted: bool) -> None:
    """A ``WRITE_OBSERVERS`` entry: a CRD being deleted gets its cleanup pass."""
    from kapi.kinds.customresourcedefinitions import CLEANUP_FINALIZER

    if rt.stored_resource != "customresourcedefinitions" or deleted:
        return
    meta = obj.get("metadata") or {}
    if not meta.get("deletionTimestamp") or CLEANUP_FINALIZER not in (meta.get("finalizers") or ()):
        return
    name = meta.get("name")

    def send() -> None:
        try:
            cleanup_crd.delay(name)
        except Exception:  # the broker is down: the beat sweep catches up
            log.warning("could not enqueue the cleanup of CRD %s", name, exc_info=True)

    transaction.on_commit(send)
