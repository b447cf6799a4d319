"""kube's bootstrap RBAC policy (``plugin/pkg/auth/authorizer/rbac/bootstrappolicy``),
the part users rely on: ``cluster-admin``, the aggregated ``admin``/``edit``/``view``,
discovery and self-review access for every authenticated user, and
``system:masters`` bound to ``cluster-admin``. Created through the registry after
every migrate; existing objects are left as they are (kube's autoupdate aside),
except that aggregating ClusterRoles are brought up to date at once
(``kapi.lifecycle.aggregation.sync_all``) rather than on the first ClusterRole
change.
"""

from __future__ import annotations

from kapi.auth.aggregation import converged
from kapi.errors import StatusError

__all__ = [
    "BOOTSTRAP_CLUSTER_ROLES",
    "BOOTSTRAP_CLUSTER_ROLE_BINDINGS",
    "ensure_bootstrap_policy",
]

_AGG = "rbac.authorization.k8s.io/aggregate-to-"
_READ = ["get", "list", "watch"]
_WRITE = ["create", "delete", "deletecollection", "patch", "update"]

_VIEWABLE = [
    (
        "",
        [
            "configmaps",
            "endpoints",
            "persistentvolumeclaims",
            "persistentvolumeclaims/status",
            "pods",
            "replicationcontrollers",
            "replicationcontrollers/scale",
            "serviceaccounts",
            "services",
            "services/status",
            "bindings",
            "events",
            "limitranges",
            "namespaces/status",
            "pods/log",
            "pods/status",
            "replicationcontrollers/status",
            "resourcequotas",
            "resourcequotas/status",
        ],
    ),
    ("", ["namespaces"]),
    ("discovery.k8s.io", ["endpointslices"]),
    (
        "apps",
        [
            "controllerrevisions",
            "daemonsets",
            "daemonsets/status",
            "deployments",
            "deployments/scale",
            "deployments/status",
            "replicasets",
            "replicasets/scale",
            "replicasets/status",
            "statefulsets",
            "statefulsets/scale",
            "statefulsets/status",
        ],
    ),
    ("autoscaling", ["horizontalpodautoscalers", "horizontalpodautoscalers/status"]),
    ("batch", ["cronjobs", "cronjobs/status", "jobs", "jobs/status"]),
    ("policy", ["poddisruptionbudgets", "poddisruptionbudgets/status"]),
    ("networking.k8s.io", ["ingresses", "ingresses/status", "networkpolicies"]),
    ("events.k8s.io", ["events"]),
]

_EDITABLE = [
    (
        "",
        [
            "pods",
            "pods/attach",
            "pods/exec",
            "pods/portforward",
            "pods/proxy",
            "configmaps",
            "endpoints",
            "persistentvolumeclaims",
            "replicationcontrollers",
            "replicationcontrollers/scale",
            "secrets",
            "serviceaccounts",
            "services",
            "services/proxy",
        ],
    ),
    (
        "apps",
        [
            "daemonsets",
            "deployments",
            "deployments/rollback",
            "deployments/scale",
            "replicasets",
            "replicasets/scale",
            "statefulsets",
            "statefulsets/scale",
        ],
    ),
    ("autoscaling", ["horizontalpodautoscalers"]),
    ("batch", ["cronjobs", "jobs"]),
    ("policy", ["poddisruptionbudgets"]),
    ("networking.k8s.io", ["ingresses", "networkpolicies"]),
    ("discovery.k8s.io", ["endpointslices"]),
]


def _labels(extra: dict | None = None) -> dict:
    return {"kubernetes.io/bootstrapping": "rbac-defaults", **(extra or {})}


def _cluster_role(
    name: str, rules=None, labels=None, aggregate_from: str | None = None
) -> dict:
    role = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {
            "name": name,
            "labels": _labels(labels),
            "annotations": {"rbac.authorization.kubernetes.io/autoupdate": "true"},
        },
        "rules": rules or [],
    }
    if aggregate_from:
        role["aggregationRule"] = {
            "clusterRoleSelectors": [{"matchLabels": {_AGG + aggregate_from: "true"}}]
        }
    return role


def _view_rules() -> list[dict]:
    return [
        {"apiGroups": [g], "resources": r, "verbs": list(_READ)} for g, r in _VIEWABLE
    ]


def _edit_rules() -> list[dict]:
    rules = [
        {"apiGroups": [g], "resources": r, "verbs": list(_WRITE)} for g, r in _EDITABLE
    ]
    rules += [
        {
            "apiGroups": [""],
            "resources": [
                "secrets",
                "pods/attach",
                "pods/exec",
                "pods/portforward",
                "pods/proxy",
                "services/proxy",
            ],
            "verbs": list(_READ),
        },
        {"apiGroups": [""], "resources": ["serviceaccounts"], "verbs": ["impersonate"]},
        {
            "apiGroups": [""],
            "resources": ["serviceaccounts/token"],
            "verbs": ["create"],
        },
    ]
    return rules


def _admin_rules() -> list[dict]:
    return [
        {
            "apiGroups": ["authorization.k8s.io"],
            "resources": ["localsubjectaccessreviews"],
            "verbs": ["create"],
        },
        {
            "apiGroups": ["rbac.authorization.k8s.io"],
            "resources": ["rolebindings", "roles"],
            "verbs": [*_WRITE, *_READ],
        },
    ]


_DISCOVERY_URLS = [
    "/api",
    "/api/*",
    "/apis",
    "/apis/*",
    "/healthz",
    "/livez",
    "/openapi",
    "/openapi/*",
    "/readyz",
    "/version",
    "/version/",
]
_PUBLIC_URLS = ["/healthz", "/livez", "/readyz", "/version", "/version/"]

_BOOTSTRAP_CLUSTER_ROLES: list[dict] = [
    _cluster_role(
        "cluster-admin",
        [
            {"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]},
            {"nonResourceURLs": ["*"], "verbs": ["*"]},
        ],
    ),
    _cluster_role("admin", aggregate_from="admin"),
    _cluster_role("edit", labels={_AGG + "admin": "true"}, aggregate_from="edit"),
    _cluster_role("view", labels={_AGG + "edit": "true"}, aggregate_from="view"),
    _cluster_role(
        "system:aggregate-to-admin", _admin_rules(), labels={_AGG + "admin": "true"}
    ),
    _cluster_role(
        "system:aggregate-to-edit", _edit_rules(), labels={_AGG + "edit": "true"}
    ),
    _cluster_role(
        "system:aggregate-to-view", _view_rules(), labels={_AGG + "view": "true"}
    ),
    _cluster_role(
        "system:basic-user",
        [
            {
                "apiGroups": ["authorization.k8s.io"],
                "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
                "verbs": ["create"],
            },
            {
                "apiGroups": ["authentication.k8s.io"],
                "resources": ["selfsubjectreviews"],
                "verbs": ["create"],
            },
        ],
    ),
    _cluster_role(
        "system:discovery", [{"nonResourceURLs": _DISCOVERY_URLS, "verbs": ["get"]}]
    ),
    _cluster_role(
        "system:public-info-viewer",
        [{"nonResourceURLs": _PUBLIC_URLS, "verbs": ["get"]}],
    ),
    # kube's system:monitoring: the metrics and health endpoints.
    _cluster_role(
        "system:monitoring",
        [
            {
                "nonResourceURLs": [
                    "/healthz", "/healthz/*", "/livez", "/livez/*", "/metrics",
                    "/readyz", "/readyz/*",
                ],
                "verbs": ["get"],
            }
        ],
    ),
    _cluster_role(
        "system:auth-delegator",
        [
            {
                "apiGroups": ["authentication.k8s.io"],
                "resources": ["tokenreviews"],
                "verbs": ["create"],
            },
            {
                "apiGroups": ["authorization.k8s.io"],
                "resources": ["subjectaccessreviews"],
                "verbs": ["create"],
            },
        ],
    ),
]


# admin/edit/view are written with their aggregated rules already in ``.rules``
# (what kube's aggregation controller converges to), so they grant from the start.
BOOTSTRAP_CLUSTER_ROLES: list[dict] = list(
    converged({r["metadata"]["name"]: r for r in _BOOTSTRAP_CLUSTER_ROLES}).values()
)


def _binding(name: str, role: str, *groups: str) -> dict:
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {
            "name": name,
            "labels": _labels(),
            "annotations": {"rbac.authorization.kubernetes.io/autoupdate": "true"},
        },
        "roleRef": {
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": "ClusterRole",
            "name": role,
        },
        "subjects": [
            {"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": g}
            for g in groups
        ],
    }


BOOTSTRAP_CLUSTER_ROLE_BINDINGS: list[dict] = [
    _binding("cluster-admin", "cluster-admin", "system:masters"),
    _binding("system:basic-user", "system:basic-user", "system:authenticated"),
    _binding("system:discovery", "system:discovery", "system:authenticated"),
    _binding("system:monitoring", "system:monitoring", "system:monitoring"),
    _binding(
        "system:public-info-viewer",
        "system:public-info-viewer",
        "system:authenticated",
        "system:unauthenticated",
    ),
]


def ensure_bootstrap_policy(registry=None) -> None:
    """Create the bootstrap ClusterRoles and ClusterRoleBindings that are missing."""
    from kapi.registry.catalog import catalog
    from kapi.registry.store import Registry

    registry = registry or Registry()
    cat = catalog()
    for plural, objects in (
        ("clusterroles", BOOTSTRAP_CLUSTER_ROLES),
        ("clusterrolebindings", BOOTSTRAP_CLUSTER_ROLE_BINDINGS),
    ):
        rt = cat.lookup("rbac.authorization.k8s.io", "v1", plural)
        for obj in objects:
            try:
                registry.create(rt, "", obj)
            except StatusError as exc:
                if exc.code != 409:
                    raise
