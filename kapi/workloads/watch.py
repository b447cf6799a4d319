"""The workloads' watch: which changes of the change log map to which keys.

The runtime's ``workloads`` feed (``kapi.controllers.feed``) reads the changes
of the core, ``apps``, ``batch`` and ``discovery.k8s.io`` groups and hands
each batch to a ``_Plan``. A key is ``namespace/name`` of the object to
reconcile, for the controller named in the row. What a change implies (kube's
informer event handlers):

* a ReplicaSet, ReplicationController, Deployment, Job, CronJob or Service:
  reconcile it; a ReplicaSet or Job also its controller (Deployment,
  CronJob), and an orphan ReplicaSet every Deployment whose selector matches it;
* a Pod: its controller (ReplicaSet, ReplicationController, Job); an orphan
  Pod every ReplicaSet, ReplicationController and Job whose selector matches
  it (adoption); and every Service with a selector in its namespace;
* an EndpointSlice the endpointslice controller manages, or a deleted
  Endpoints: its Service.

``resync(full=True)`` (the history went past the cursor) asks for every object
of those kinds once; the slow safety sweep asks for nothing (timers of
CronJobs and Deployments live in the work table).
"""

from __future__ import annotations

from kapi.controllers import feed, workqueue
from kapi.registry.store import Registry
from kapi.storage import default_storage
from kapi.storage.interface import Change, ChangeFilter
from kapi.workloads import api, endpoints
from kapi.workloads.endpoints import MANAGED_BY, SERVICE_NAME

__all__ = ["CONTROLLER_OF", "FEED", "WATCH", "WATCHED"]

FEED = "workloads"

#: (stored group, resource) -> the controller reconciling objects of it.
CONTROLLER_OF = {
    ("apps", "replicasets"): "replicaset",
    ("", "replicationcontrollers"): "replicationcontroller",
    ("apps", "deployments"): "deployment",
    ("batch", "jobs"): "job",
    ("batch", "cronjobs"): "cronjob",
    ("", "services"): "endpoints",
}
#: (apiVersion group, kind) of a controller reference -> its controller.
_BY_KIND = {
    ("apps", "ReplicaSet"): "replicaset",
    ("", "ReplicationController"): "replicationcontroller",
    ("apps", "Deployment"): "deployment",
    ("batch", "Job"): "job",
    ("batch", "CronJob"): "cronjob",
}
#: Where the owning kinds that adopt an orphan of a resource are stored.
_ADOPTERS = {
    "pods": (("apps", "replicasets"), ("", "replicationcontrollers"), ("batch", "jobs")),
    "replicasets": (("apps", "deployments"),),
}
#: Every (stored group, resource) whose writes the feed must see.
WATCHED = frozenset(
    [*CONTROLLER_OF, ("", "pods"), ("", "endpoints"), ("discovery.k8s.io", "endpointslices")]
)


def _controller_ref(meta: dict) -> dict | None:
    for ref in meta.get("ownerReferences") or ():
        if isinstance(ref, dict) and ref.get("controller") is True:
            return ref
    return None


class _Plan(feed.Plan):
    def __init__(self) -> None:
        self.keys: dict[tuple[str, str, str], str] = {}  # (controller, ns, name) -> request
        self.orphans: dict[tuple[str, str], list[dict]] = {}  # (ns, resource) -> labels
        self.pod_namespaces: dict[str, str] = {}

    def _ask(self, controller: str, namespace: str, name: str, request_id: str) -> None:
        self.keys.setdefault((controller, namespace, name), request_id)

    def add(self, change: Change) -> None:
        key = change.key
        where = (key.group, key.resource)
        if where not in WATCHED:
            return
        meta, rid = change.metadata, change.request_id
        controller = CONTROLLER_OF.get(where)
        if controller is not None:
            self._ask(controller, key.namespace, key.name, rid)
        if key.resource in ("pods", "replicasets", "jobs"):
            ref = _controller_ref(meta)
            if ref is not None:
                group = str(ref.get("apiVersion") or "").rpartition("/")[0]
                owner = _BY_KIND.get((group, ref.get("kind")))
                if owner is not None and ref.get("name"):
                    self._ask(owner, key.namespace, ref["name"], rid)
            elif change.type != "DELETED" and key.resource in _ADOPTERS:
                self.orphans.setdefault((key.namespace, key.resource), []).append(
                    meta.get("labels") or {}
                )
        if where == ("", "pods"):
            self.pod_namespaces.setdefault(key.namespace, rid)
        elif where == ("", "endpoints"):
            if change.type == "DELETED":
                self._ask("endpoints", key.namespace, key.name, rid)
        elif where == ("discovery.k8s.io", "endpointslices"):
            labels = meta.get("labels") or {}
            service = labels.get(SERVICE_NAME)
            if service and labels.get(MANAGED_BY) == endpoints.CONTROLLER:
                self._ask("endpoints", key.namespace, service, rid)

    def ask(self) -> int:
        if self.orphans or self.pod_namespaces:
            registry = Registry()
            self._adopters(registry)
            self._services(registry)
        rows = [
            (controller, f"{ns}/{name}", "", "", ns, name, "", rid)
            for (controller, ns, name), rid in self.keys.items()
        ]
        return workqueue.request(rows)

    def _adopters(self, registry: Registry) -> None:
        for (namespace, resource), label_sets in self.orphans.items():
            for group, plural in _ADOPTERS[resource]:
                for owner in api.list_objects(registry, api.resource(group, plural), namespace):
                    spec = owner.get("spec") or {}
                    selector = spec.get("selector")
                    if plural == "replicationcontrollers":
                        selector = {"matchLabels": selector} if isinstance(selector, dict) else None
                    parsed = api.selector_of(selector)
                    if parsed is None or parsed.empty:
                        continue
                    if any(parsed.matches(labels) for labels in label_sets):
                        self._ask(
                            CONTROLLER_OF[(group, plural)], namespace, owner["metadata"]["name"], ""
                        )

    def _services(self, registry: Registry) -> None:
        services = api.resource("", "services")
        for namespace, rid in self.pod_namespaces.items():
            for service in api.list_objects(registry, services, namespace):
                if (service.get("spec") or {}).get("selector"):
                    self._ask("endpoints", namespace, service["metadata"]["name"], rid)


def _resync(full: bool) -> int:
    if not full:
        return 0
    rows = []
    for (group, resource), controller in CONTROLLER_OF.items():
        for key in default_storage().keys(group, [resource]):
            rows.append(
                (controller, f"{key.namespace}/{key.name}", "", "", key.namespace, key.name, "", "")
            )
    return workqueue.request(rows, bump=False)


WATCH = feed.Watch(
    FEED,
    _Plan,
    _resync,
    select=ChangeFilter(resources=tuple(sorted(WATCHED))),
    reads=("labels", "ownerReferences"),
)
