"""Namespaces: the default ServiceAccount, and termination, after kube's
``pkg/controller/namespace/deletion``.

A namespace being deleted (phase ``Terminating``, ``kubernetes`` in
``spec.finalizers``) gets one ``delete`` work item per object it holds, of every
namespaced kind served (built-in and custom), asked for in bulk by storage
(``kapi.storage.purge``: one statement per batch of ``ASK_BATCH``). Each
pass counts what is left and sets kube's conditions on the namespace's status;
once nothing is left the ``kubernetes`` finalizer is removed through
``/finalize``, and the registry removes the namespace on that write. Objects
waiting on their own finalizers hold the namespace (with an Event saying so).
"""

from __future__ import annotations

import logging
from collections import Counter

from kapi.controllers import wakeup, workqueue
from kapi.errors import StatusError
from kapi.lifecycle import FIELD_MANAGER, events, objects
from kapi.observability.context import current_request_id
from kapi.registry.catalog import catalog
from kapi.registry.options import CreateOptions, DeleteOptions, UpdateOptions
from kapi.registry.store import Registry, now_rfc3339
from kapi.storage import Preconditions, default_storage, purge

__all__ = [
    "ASK_BATCH",
    "delete_content_item",
    "ensure_default_service_account",
    "process",
]

log = logging.getLogger(__name__)

FINALIZER = "kubernetes"


def process(uid: str, registry: Registry | None = None) -> float | None:
    """One pass over the namespace ``uid``. Returns seconds until the next pass is
    needed, or None when there is nothing more to do."""
    registry = registry or Registry()
    found = objects.get_by_uid(uid, registry)
    if found is None:
        return None
    rt, ns = found
    name = ns["metadata"]["name"]
    if "deletionTimestamp" not in ns["metadata"]:
        ensure_default_service_account(name, registry)
        return None
    if FINALIZER not in ((ns.get("spec") or {}).get("finalizers") or []):
        return None
    # Every kind served now, CRDs created a moment ago included.
    types = objects.served_namespaced(fresh=True)
    asked = _ask_deletes(name, types)
    if asked:
        wakeup.wake_workers(2 if asked > 50 else 1)
    remaining, finalizers, failing = _census(name, types)
    _set_conditions(registry, rt, ns, remaining, finalizers, failing)
    if not remaining:
        _finalize(registry, rt, ns)
        return None
    if finalizers and sum(remaining.values()) == _deleting_count(name):
        events.record(
            rt,
            ns,
            "Warning",
            "NamespaceFinalizersRemaining",
            "Some content in the namespace has finalizers remaining: "
            + _finalizer_text(finalizers),
            events.NAMESPACE_COMPONENT,
            registry,
        )
    return 5.0 if asked else 2.0


def ensure_default_service_account(
    namespace: str, registry: Registry | None = None
) -> None:
    registry = registry or Registry()
    rt = catalog().lookup("", "v1", "serviceaccounts")
    try:
        registry.get(rt, namespace, "default")
        return
    except StatusError:
        pass
    try:
        registry.create(
            rt,
            namespace,
            {
                "apiVersion": "v1",
                "kind": "ServiceAccount",
                "metadata": {"name": "default"},
            },
            CreateOptions(field_manager=FIELD_MANAGER),
        )
    except StatusError as exc:
        if exc.code not in (403, 404, 409):  # terminating, gone, already there
            raise


def delete_content_item(item, registry: Registry | None = None) -> None:
    """Delete one object of a terminating namespace (Background, as kube's deleter)."""
    registry = registry or Registry()
    rt = objects.type_for_stored(item.group, item.resource)
    if rt is None:
        raise objects.TypeNotServed(f"{item.resource}.{item.group} is not served")
    options = DeleteOptions(
        preconditions=Preconditions(uid=item.key),
        propagation_policy=item.argument or "Background",
    )
    try:
        registry.delete(rt, item.namespace, item.name, options)
    except StatusError as exc:
        if exc.code in (404, 409):
            return
        try:
            obj = registry.get(rt, item.namespace, item.name)
            events.record(
                rt,
                obj,
                "Warning",
                "FailedDelete",
                f"the namespace controller could not delete {rt.plural} {item.name}: {exc}",
                events.NAMESPACE_COMPONENT,
                registry,
            )
        except StatusError:
            pass
        raise


#: Delete items asked for per statement: each statement is a short
#: transaction (issue #20: one INSERT of 10,000 items held its transaction, and
#: with it every consistent read, for half a second).
ASK_BATCH = 1000


def _ask_deletes(namespace: str, types: list[tuple[str, str]]) -> int:
    # One bulk statement per batch (kapi.storage.purge); at most 100 per pass.
    # The namespace's deletion request is current while its item runs.
    return purge.ask_deletes(
        namespace, types, request_id=current_request_id() or "", batch=ASK_BATCH, batches=100
    )


def _census(namespace: str, types) -> tuple[Counter, Counter, int]:
    """(objects left per type, objects per finalizer, delete items failing)."""
    storage = default_storage()
    remaining = Counter(storage.count_in_namespace(namespace, types))
    finalizers: Counter = Counter()
    if remaining:
        finalizers.update(storage.finalizers_in_namespace(namespace, types))
    failing = workqueue.failing("delete", namespace, attempts=3)
    return remaining, finalizers, failing


def _deleting_count(namespace: str) -> int:
    return default_storage().count_deleting_in_namespace(namespace)


def _finalizer_text(finalizers: Counter) -> str:
    return ", ".join(
        f"{f} in {n} resource instances" for f, n in sorted(finalizers.items())
    )


def _conditions(remaining: Counter, finalizers: Counter, failing: int) -> list[dict]:
    def cond(type_: str, status: bool, reason: str, message: str) -> dict:
        return {
            "type": type_,
            "status": "True" if status else "False",
            "reason": reason,
            "message": message,
        }

    out = [
        cond(
            "NamespaceDeletionDiscoveryFailure",
            False,
            "ResourcesDiscovered",
            "All resources successfully discovered",
        ),
        cond(
            "NamespaceDeletionGroupVersionParsingFailure",
            False,
            "ParsedGroupVersions",
            "All legacy kube types successfully parsed",
        ),
    ]
    if failing:
        out.append(
            cond(
                "NamespaceDeletionContentFailure",
                True,
                "ContentDeletionFailed",
                f"Failed to delete all resource types, {failing} remaining: some objects could not be deleted",
            )
        )
    else:
        out.append(
            cond(
                "NamespaceDeletionContentFailure",
                False,
                "ContentDeleted",
                "All content successfully deleted, may be waiting on finalization",
            )
        )
    if remaining:
        text = ", ".join(
            f"{r}.{g} has {n} resource instances"
            for (g, r), n in sorted(remaining.items())
        )
        out.append(
            cond(
                "NamespaceContentRemaining",
                True,
                "SomeResourcesRemain",
                f"Some resources are remaining: {text}",
            )
        )
    else:
        out.append(
            cond(
                "NamespaceContentRemaining",
                False,
                "ContentRemoved",
                "All content successfully removed",
            )
        )
    if finalizers:
        out.append(
            cond(
                "NamespaceFinalizersRemaining",
                True,
                "SomeFinalizersRemain",
                "Some content in the namespace has finalizers remaining: "
                + _finalizer_text(finalizers),
            )
        )
    else:
        out.append(
            cond(
                "NamespaceFinalizersRemaining",
                False,
                "ContentHasNoFinalizers",
                "All content-preserving finalizers finished",
            )
        )
    return out


def _set_conditions(registry, rt, ns, remaining, finalizers, failing) -> None:
    wanted = _conditions(remaining, finalizers, failing)
    now = now_rfc3339()

    def apply(current: dict) -> dict:
        status = current.setdefault("status", {})
        old = {c.get("type"): c for c in status.get("conditions") or []}
        merged = []
        for c in wanted:
            prev = old.get(c["type"])
            if prev and all(
                prev.get(k) == c[k] for k in ("status", "reason", "message")
            ):
                merged.append(prev)
            else:
                merged.append(
                    {
                        "type": c["type"],
                        "status": c["status"],
                        "lastTransitionTime": now,
                        "reason": c["reason"],
                        "message": c["message"],
                    }
                )
        status["conditions"] = merged
        return current

    meta = ns["metadata"]
    try:
        registry.update_with(
            rt,
            "",
            meta["name"],
            apply,
            UpdateOptions(subresource="status", field_manager=FIELD_MANAGER),
            preconditions=Preconditions(uid=meta["uid"]),
        )
    except StatusError as exc:
        if exc.code not in (404, 409):
            raise


def _finalize(registry, rt, ns) -> None:
    meta = ns["metadata"]

    def strip(current: dict) -> dict:
        spec = current.setdefault("spec", {})
        spec["finalizers"] = [f for f in spec.get("finalizers") or [] if f != FINALIZER]
        return current

    try:
        registry.update_with(
            rt,
            "",
            meta["name"],
            strip,
            UpdateOptions(subresource="finalize", field_manager=FIELD_MANAGER),
            preconditions=Preconditions(uid=meta["uid"]),
        )
    except StatusError as exc:
        if exc.code not in (404, 409):
            raise
