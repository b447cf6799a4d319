"""The controller runtime: one work table, change feeds, workers and timers.

After controller-runtime and client-go's workqueue. A controller says two
things: which changes map to which keys (a ``feed.Watch``) and what reconciling
a key does (``controller.Controller.reconcile`` returning ``requeue_after``).
The runtime owns the rest, with the intent in PostgreSQL and Celery only
waking workers:

1. A write that matters to a feed wakes it after the commit (``feed.wake``:
   one task per burst, ``kapi.wakeflag``).
2. The feed (one run at a time) reads the change log after its durable cursor
   (``Storage.read_feed``), lets each watch map the batch to keys, and in one
   transaction requests them (``workqueue.request``) and moves the cursor.
3. ``kapi.controllers.work`` tasks lease due keys in batches (``workqueue``:
   ``FOR UPDATE SKIP LOCKED``, so one key runs in one place at a time, and a
   killed worker's leases expire) and reconcile them (``runner``); errors come
   back with exponential backoff, ``requeue_after`` when asked.
4. Keys due later arm a due timer (``kapi.duetimer``), never a per-second
   tick. Beat's slow ``sweep`` and ``resync`` are the safety net only.

Controllers, listed in ``settings.KAPI_CONTROLLERS``:
``kapi.lifecycle.controllers`` (garbage collection, namespaces, ClusterRole
aggregation) and ``kapi.lifecycle.crds`` (the CRD cleanup finalizer) on the
``lifecycle`` feed; ``kapi.workloads.controllers`` (ReplicaSets,
ReplicationControllers, Deployments, Jobs, CronJobs, EndpointSlices and
Endpoints) on the ``workloads`` feed; ``sync.controllers`` (Syncs and GitRepositories, long
running: claimed one at a time, their lease extended while they run) with
``sync.changes`` on the ``sync`` feed.
"""
