"""kube-controller-manager's workload controllers that need no kubelet.

On the controller runtime (``kapi.controllers``), as ``kapi.lifecycle`` is:
``watch`` maps changes of the change log to keys (``namespace/name`` of the
object to reconcile), ``controllers`` says what reconciling each kind of key
does, and ``wakeup`` wakes the ``workloads`` feed after writes of the kinds
watched. The controllers, after kube's ``pkg/controller``:

* ``replicaset`` and ``replicationcontroller`` (``replicaset``): Pods from the
  template to match ``spec.replicas``, adopted and released by labels
  (``ownership``), and ``status``;
* ``deployment`` (``deployment``, ``rollout``, ``revisions``): ReplicaSets per
  pod template (``pod-template-hash``), rolling and recreate rollouts, history
  cleanup and ``status``;
* ``job`` (``job``) and ``cronjob`` (``cronjob``, ``cron``): Pods of a Job,
  Jobs on a schedule;
* ``endpoints`` (``endpoints``): the EndpointSlice and Endpoints of every
  Service with a selector.

Nothing runs a Pod: they stay ``Pending`` and never become ready, so the
controllers do what kube's do with no kubelet. They write as field manager
``kube-controller-manager``.
"""

__all__ = ["FIELD_MANAGER"]

FIELD_MANAGER = "kube-controller-manager"
