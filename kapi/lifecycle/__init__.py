"""The deletion lifecycle on Celery workers: garbage collection, namespace
termination, default ServiceAccounts and the Events the workers record.

The lifecycle is a set of controllers on the controller runtime
(``kapi.controllers``): ``watch`` maps changes of the change log to keys
(check an object's owners, handle an owner's dependents, look at a namespace,
delete a terminating namespace's content, aggregate a ClusterRole), and
``controllers`` says what reconciling each does (``gc.attempt``, ``gc.owner``,
``namespaces.process``, ``namespaces.delete_content_item``,
``aggregation.sync``); ``crds`` is the CRD cleanup finalizer's controller.
Writes that matter wake the lifecycle's feed (``wakeup``). Every write goes
through the registry with a uid precondition. A namespace's deletes commit
in small groups (one WAL flush per group); every transaction stays short,
because consistent reads wait for the ones that took a resourceVersion.

The workers write as field manager ``kube-controller-manager``, the name kube's
garbage collector, namespace controller and ServiceAccount controller write under.
"""

__all__ = ["FIELD_MANAGER"]

FIELD_MANAGER = "kube-controller-manager"
