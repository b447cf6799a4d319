"""The root-CA publisher, after kube-controller-manager's
``pkg/controller/certificates/rootcacertpublisher``.

Every namespace not being deleted holds a ConfigMap ``kube-root-ca.crt`` whose
``data`` is exactly ``{"ca.crt": <the CA that serves the API>}`` and which
carries kube's description annotation. A missing one is created; one whose data
or annotation was edited is put back (its other fields, labels and
``binaryData`` included, are left as the editor made them, as kube does).
"""

from __future__ import annotations

import logging
from functools import cache
from pathlib import Path

from django.conf import settings

from kapi.errors import StatusError
from kapi.lifecycle import FIELD_MANAGER
from kapi.registry.catalog import catalog
from kapi.registry.options import CreateOptions, UpdateOptions
from kapi.registry.store import Registry
from kapi.runtime.certs import tls_files

__all__ = ["CONFIGMAP", "DESCRIPTION", "DESCRIPTION_ANNOTATION", "publish", "root_ca"]

log = logging.getLogger(__name__)

CONFIGMAP = "kube-root-ca.crt"
DESCRIPTION_ANNOTATION = "kubernetes.io/description"
DESCRIPTION = (
    "Contains a CA bundle that can be used to verify the kube-apiserver when using internal "
    "endpoints such as the internal service IP or kubernetes.default.svc. No other usage is "
    "guaranteed across distributions of Kubernetes clusters."
)


def root_ca() -> str | None:
    """The PEM of the CA that serves the API (``<data>/tls/ca.crt``), or None
    (``serve --insecure-http`` makes none: there is nothing to publish)."""
    return _read(tls_files(Path(settings.DATA_DIR)).ca_cert)


@cache
def _read(path: Path) -> str | None:
    # The CA is made once for a data directory and never rotated (kapi.runtime.certs).
    try:
        return path.read_text()
    except OSError:
        log.warning("no CA at %s: kube-root-ca.crt ConfigMaps are not published", path)
        return None


def publish(namespace: str, registry: Registry) -> None:
    """Make ``namespace``'s ``kube-root-ca.crt`` what it must be."""
    ca = root_ca()
    if ca is None:
        return
    rt = catalog().lookup("", "v1", "configmaps")
    data = {"ca.crt": ca}
    try:
        cm = registry.get(rt, namespace, CONFIGMAP)
    except StatusError as exc:
        if exc.code != 404:
            raise
        _create(registry, rt, namespace, data)
        return
    annotations = cm["metadata"].get("annotations") or {}
    if cm.get("data") == data and annotations.get(DESCRIPTION_ANNOTATION):
        return
    cm["data"] = data
    cm["metadata"]["annotations"] = {**annotations, DESCRIPTION_ANNOTATION: DESCRIPTION}
    try:
        registry.update(rt, namespace, CONFIGMAP, cm, UpdateOptions(field_manager=FIELD_MANAGER))
    except StatusError as exc:
        if exc.code not in (404, 409):  # gone, or edited again: its change asks once more
            raise


def _create(registry: Registry, rt, namespace: str, data: dict) -> None:
    body = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": CONFIGMAP,
            "annotations": {DESCRIPTION_ANNOTATION: DESCRIPTION},
        },
        "data": data,
    }
    try:
        registry.create(rt, namespace, body, CreateOptions(field_manager=FIELD_MANAGER))
    except StatusError as exc:
        # The namespace is gone or terminating, or another pass made it first.
        # Any other refusal (a ResourceQuota whose status is not counted yet,
        # or that is full) is retried with backoff, as kube's publisher requeues.
        if exc.code not in (403, 404, 409) or (exc.code == 403 and not _terminating(exc)):
            raise


def _terminating(exc: StatusError) -> bool:
    causes = (exc.status.get("details") or {}).get("causes") or []
    return any(c.get("reason") == "NamespaceTerminating" for c in causes)
