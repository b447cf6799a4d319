"""Celery tasks of the CRD cleanup finalizer (thin: names in, one call, nothing out)."""

from __future__ import annotations

from celery import shared_task

from kapi.storage.errors import ResourceVersionConflict

__all__ = ["cleanup_crd", "sweep_crd_cleanup"]


@shared_task(
    name="kapi.crd.cleanup",
    acks_late=True,
    autoretry_for=(ResourceVersionConflict,),
    retry_backoff=True,
    max_retries=5,
)
def cleanup_crd(name: str) -> None:
    from kapi.registry.crdcleanup import cleanup_crd as run

    run(name)


@shared_task(name="kapi.crd.sweep", acks_late=True)
def sweep_crd_cleanup() -> None:
    """Beat's safety net and trigger: enqueue a pass for every CRD being deleted,
    and give CRDs waiting for names those another CRD released since."""
    from kapi.registry.crdcleanup import crds_to_clean_up
    from kapi.registry.crdnames import reconcile_waiting

    for name in crds_to_clean_up():
        cleanup_crd.delay(name)
    reconcile_waiting()
