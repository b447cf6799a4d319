"""ResourceQuota, after kube-controller-manager's ``pkg/controller/resourcequota``
and kube-apiserver's quota admission (``plugin/pkg/admission/resourcequota``).

``usage`` says what one object costs (kube's evaluators: object counts, pods'
requests and limits, services' load balancers and node ports, claims'
storage) and whether a quota's scopes match it; ``admission`` refuses a create
or update that would pass a quota and charges the quota's ``status.used`` under
optimistic concurrency; ``controller`` recomputes ``status`` of every quota of
a namespace from the objects themselves; ``watch`` and ``controllers`` put it on
the one controller runtime.
"""
