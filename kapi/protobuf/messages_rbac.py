"""Protobuf message tables of the rbac.authorization.k8s.io/v1 API.

Field numbers and types follow k8s.io/api's rbac/v1 generated.proto;
JSON names follow the Go json tags. The notation is described in
``kapi.protobuf.schema``.
"""

from __future__ import annotations

from kapi.protobuf.schema import Message

__all__ = ["KINDS", "MESSAGES"]

MESSAGES: dict[str, Message] = {
    "rbac.v1.AggregationRule": {
        1: ("clusterRoleSelectors", "[]meta.v1.LabelSelector"),
    },
    "rbac.v1.ClusterRole": {
        1: ("metadata", "meta.v1.ObjectMeta"),
        2: ("rules", "[]rbac.v1.PolicyRule"),
        3: ("aggregationRule", "rbac.v1.AggregationRule"),
    },
    "rbac.v1.ClusterRoleBinding": {
        1: ("metadata", "meta.v1.ObjectMeta"),
        2: ("subjects", "[]rbac.v1.Subject"),
        3: ("roleRef", "rbac.v1.RoleRef"),
    },
    "rbac.v1.ClusterRoleBindingList": {
        1: ("metadata", "meta.v1.ListMeta"),
        2: ("items", "[]rbac.v1.ClusterRoleBinding"),
    },
    "rbac.v1.ClusterRoleList": {
        1: ("metadata", "meta.v1.ListMeta"),
        2: ("items", "[]rbac.v1.ClusterRole"),
    },
    "rbac.v1.PolicyRule": {
        1: ("verbs", "[]string"),
        2: ("apiGroups", "[]string"),
        3: ("resources", "[]string"),
        4: ("resourceNames", "[]string"),
        5: ("nonResourceURLs", "[]string"),
    },
    "rbac.v1.Role": {
        1: ("metadata", "meta.v1.ObjectMeta"),
        2: ("rules", "[]rbac.v1.PolicyRule"),
    },
    "rbac.v1.RoleBinding": {
        1: ("metadata", "meta.v1.ObjectMeta"),
        2: ("subjects", "[]rbac.v1.Subject"),
        3: ("roleRef", "rbac.v1.RoleRef"),
    },
    "rbac.v1.RoleBindingList": {
        1: ("metadata", "meta.v1.ListMeta"),
        2: ("items", "[]rbac.v1.RoleBinding"),
    },
    "rbac.v1.RoleList": {
        1: ("metadata", "meta.v1.ListMeta"),
        2: ("items", "[]rbac.v1.Role"),
    },
    "rbac.v1.RoleRef": {
        1: ("apiGroup", "*string"),
        2: ("kind", "*string"),
        3: ("name", "*string"),
    },
    "rbac.v1.Subject": {
        1: ("kind", "*string"),
        2: ("apiGroup", "string"),
        3: ("name", "*string"),
        4: ("namespace", "string"),
    },
}

# apiVersion -> (message package, kinds registered in it)
KINDS: dict[str, tuple[str, tuple[str, ...]]] = {
    "rbac.authorization.k8s.io/v1": (
        "rbac.v1",
        (
            "ClusterRole",
            "ClusterRoleBinding",
            "ClusterRoleBindingList",
            "ClusterRoleList",
            "Role",
            "RoleBinding",
            "RoleBindingList",
            "RoleList",
        ),
    ),
}
