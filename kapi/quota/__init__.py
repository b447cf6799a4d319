"""ResourceQuota: usage, admission and the quota controller.

After kube's ``pkg/quota/v1`` (evaluators), ``plugin/pkg/admission/resourcequota``
(the admission check) and ``pkg/controller/resourcequota`` (the controller that
writes ``status``):

* ``resources``: resource lists of quantities (add, mask, compare, print);
* ``evaluators``: what an object of a kind uses (pods, services, PVCs, any
  object's count) and whether it falls in a quota's scopes;
* ``usage``: a quota's ``status.used``, counted from the objects in its namespace;
* ``admission``: refuse a write past a quota, and charge it in the write's
  transaction (kube updates ``status.used`` under optimistic concurrency);
* ``controllers``/``wakeup``: the quota controller on the controller runtime,
  woken by writes in namespaces that have a quota.
"""
