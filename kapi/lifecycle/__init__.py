"""The deletion lifecycle on Celery workers: garbage collection, namespace
termination, default ServiceAccounts and the Events the workers record.

How the work flows (everything that matters is in PostgreSQL; Redis only wakes
workers up):

1. A write through the registry that matters (a deletion, an object being
   deleted, one with ownerReferences, a namespace) flips the feed cursor's
   ``wanted`` flag (after the commit, when it is made inside a transaction) and
   enqueues ``kapi.lifecycle.process_changes`` (``wakeup``).
2. The feed (``feed``, one at a time under an advisory lock) reads the change log
   after its cursor up to ``kapi_rv_horizon()`` and, in one transaction with the
   cursor move, asks for work items (``work``): check an object's owners, handle
   an owner's dependents, look at a namespace.
3. ``kapi.lifecycle.work`` tasks claim due items in batches with a conditional
   UPDATE (``FOR UPDATE SKIP LOCKED``; claims expire, so a killed worker's items
   come back) and run them (``runner``): ``gc.attempt``, ``gc.owner``,
   ``namespaces.process``, ``namespaces.delete_content_item``. Every write goes
   through the registry with a uid precondition. A namespace's deletes commit
   in small groups (one WAL flush per group); every transaction stays short,
   because consistent reads wait for the ones that took a resourceVersion.
4. Beat runs ``kapi.lifecycle.sweep`` (feed catch-up, wake workers for due items)
   every 2 s and ``kapi.lifecycle.resync`` (re-ask for what deleting objects and
   namespaces say is unfinished) every 15 s: the safety net, not the driver.

The workers write as field manager ``kube-controller-manager``, the name kube's
garbage collector, namespace controller and ServiceAccount controller write under.
"""

__all__ = ["FIELD_MANAGER"]

FIELD_MANAGER = "kube-controller-manager"
