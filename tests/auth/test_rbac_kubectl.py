"""RBAC through kubectl with several users' kubeconfigs: ``auth can-i`` answers,
kube's 403 messages, escalation prevention and impersonation."""

from __future__ import annotations

import json

import pytest
from auth.conftest import eventually
from kapi_testserver import KapiServer

# (verb, resource, subresource-free) -> expected for view, edit, admin, custom Role
MATRIX = [
    (("get", "pods"), (True, True, True, False)),
    (("list", "configmaps"), (True, True, True, True)),
    (("create", "configmaps"), (False, True, True, False)),
    (("get", "configmaps/cm1"), (True, True, True, True)),
    (("delete", "configmaps/cm1"), (False, True, True, True)),
    (("delete", "configmaps/other"), (False, True, True, False)),
    (("get", "secrets"), (False, True, True, False)),
    (("create", "deployments.apps"), (False, True, True, False)),
    (("create", "rolebindings.rbac.authorization.k8s.io"), (False, False, True, False)),
    (("create", "serviceaccounts/token"), (False, True, True, False)),
    (
        ("list", "namespaces"),
        (True, True, True, False),
    ),  # view lists namespaces; -n scopes the review
    (("get", "nodes"), (False, False, False, False)),
]


def test_can_i_matrix_bootstrap_roles_and_custom_role(
    kapi_server: KapiServer, make_user, ns
) -> None:
    """view/edit/admin (aggregated ClusterRoles) and a custom Role answer as in kube."""
    users = [make_user(n) for n in ("viewer", "editor", "nsadmin", "custom")]
    kapi_server.kubectl(
        "create",
        "role",
        "cm-one",
        "-n",
        ns,
        "--verb=get,list,delete",
        "--resource=configmaps",
        "--resource-name=cm1",
    )
    kapi_server.kubectl(
        "create", "role", "cm-list", "-n", ns, "--verb=list", "--resource=configmaps"
    )
    for user, role in zip(
        users,
        ("clusterrole=view", "clusterrole=edit", "clusterrole=admin", "role=cm-one"),
        strict=True,
    ):
        kapi_server.kubectl(
            "create",
            "rolebinding",
            f"b-{user.name}",
            "-n",
            ns,
            f"--{role}",
            f"--user={user.name}",
        )
    kapi_server.kubectl(
        "create",
        "rolebinding",
        "b-list",
        "-n",
        ns,
        "--role=cm-list",
        f"--user={users[3].name}",
    )
    eventually(lambda: users[3].can_i("list", "configmaps", "-n", ns))
    for (verb, resource), expected in MATRIX:
        got = tuple(u.can_i(verb, resource, "-n", ns) for u in users)
        assert got == expected, (verb, resource, got)
    # Elsewhere nobody but the admin token may do anything.
    assert not users[2].can_i("get", "pods", "-n", "default")
    assert kapi_server.kubectl("auth", "can-i", "*", "*").stdout.strip() == "yes"


def test_can_i_list(kapi_server: KapiServer, make_user, ns) -> None:
    """SelfSubjectRulesReview lists the Role's rules and the discovery URLs."""
    user = make_user("lister")
    kapi_server.kubectl(
        "create",
        "role",
        "r",
        "-n",
        ns,
        "--verb=get,watch",
        "--resource=leases.coordination.k8s.io",
    )
    kapi_server.kubectl(
        "create", "rolebinding", "b", "-n", ns, "--role=r", f"--user={user.name}"
    )
    eventually(
        lambda: (
            "leases.coordination.k8s.io"
            in user.kubectl("auth", "can-i", "--list", "-n", ns).stdout
        )
    )
    out = user.kubectl("auth", "can-i", "--list", "-n", ns).stdout
    line = next(
        x for x in out.splitlines() if x.startswith("leases.coordination.k8s.io")
    )
    assert "[get watch]" in line
    assert "selfsubjectaccessreviews.authorization.k8s.io" in out
    assert "[/api]" in out


def _forbidden(user: str, verb: str, resource: str, ns: str, name: str = "") -> str:
    subject = f'{resource} "{name}"' if name else resource
    return (
        f'{subject} is forbidden: User "{user}" cannot {verb} '
        f'resource "{resource}" in API group "" in the namespace "{ns}"'
    )


def test_forbidden_verbs_with_kube_message(
    kapi_server: KapiServer, make_user, ns
) -> None:
    """list, watch, create, patch and delete are refused with kube's exact message."""
    user = make_user("nobody")
    kapi_server.kubectl("create", "configmap", "c", "-n", ns)
    cases = [
        (("get", "configmaps", "-n", ns), "list", ""),
        (("create", "configmap", "x", "-n", ns), "create", ""),
        (("delete", "configmap", "c", "-n", ns), "delete", "c"),
    ]
    for args, verb, name in cases:
        result = user.kubectl(*args)
        assert result.returncode != 0, args
        assert _forbidden(user.name, verb, "configmaps", ns, name) in result.stderr, (
            result.stderr
        )
    # A watch (kubectl lists before it watches, so over raw HTTP).
    import requests

    response = requests.get(
        f"{kapi_server.url}/api/v1/namespaces/{ns}/configmaps?watch=1",
        headers={"Authorization": f"Bearer {user.token}"},
        verify=str(kapi_server.ca_path),
        timeout=30,
    )
    assert response.status_code == 403
    assert response.json()["message"] == _forbidden(
        user.name, "watch", "configmaps", ns
    )
    # A patch (kubectl gets the object first, so over raw HTTP).
    response = requests.patch(
        f"{kapi_server.url}/api/v1/namespaces/{ns}/configmaps/c",
        data='{"data":{"a":"b"}}',
        headers={
            "Authorization": f"Bearer {user.token}",
            "Content-Type": "application/merge-patch+json",
        },
        verify=str(kapi_server.ca_path),
        timeout=30,
    )
    assert response.status_code == 403
    assert response.json()["message"] == _forbidden(
        user.name, "patch", "configmaps", ns, "c"
    )
    assert response.json()["details"] == {"name": "c", "kind": "configmaps"}
    # Cluster scope wording, and a non-resource URL.
    result = user.kubectl("get", "nodes")
    assert (
        f'nodes is forbidden: User "{user.name}" cannot list resource "nodes" in API group "" at the cluster scope'
        in result.stderr
    )
    result = user.kubectl("get", "--raw", "/metrics")
    assert (
        f'forbidden: User "{user.name}" cannot get path "/metrics"' in result.stderr
        or "NotFound" in result.stderr
    )


def test_list_and_watch_only_where_allowed(
    kapi_server: KapiServer, make_user, ns
) -> None:
    """A user with list in one namespace lists there and nowhere else (nor across all)."""
    user = make_user("scoped")
    kapi_server.kubectl("create", "configmap", "visible", "-n", ns)
    kapi_server.kubectl(
        "create",
        "rolebinding",
        "v",
        "-n",
        ns,
        "--clusterrole=view",
        f"--user={user.name}",
    )
    eventually(lambda: user.kubectl("get", "configmaps", "-n", ns).returncode == 0)
    assert "visible" in user.kubectl("get", "configmaps", "-n", ns).stdout
    assert user.kubectl("get", "configmaps", "-A").returncode != 0
    assert user.kubectl("get", "configmaps", "-n", "default").returncode != 0


def test_escalation_refused(kapi_server: KapiServer, make_user, ns) -> None:
    """A user who may write Roles/RoleBindings cannot grant what they do not hold."""
    user = make_user("escalator")
    kapi_server.kubectl(
        "create",
        "role",
        "rbac-w",
        "-n",
        ns,
        "--verb=create,get,list,update,patch",
        "--resource=roles,rolebindings",
    )
    kapi_server.kubectl(
        "create", "role", "cm-r", "-n", ns, "--verb=get", "--resource=configmaps"
    )
    kapi_server.kubectl(
        "create", "rolebinding", "w", "-n", ns, "--role=rbac-w", f"--user={user.name}"
    )
    kapi_server.kubectl(
        "create", "rolebinding", "r", "-n", ns, "--role=cm-r", f"--user={user.name}"
    )
    eventually(lambda: user.can_i("create", "roles", "-n", ns))

    result = user.kubectl(
        "create", "role", "grab", "-n", ns, "--verb=get", "--resource=secrets"
    )
    assert result.returncode != 0
    assert (
        f'roles.rbac.authorization.k8s.io "grab" is forbidden: user "{user.name}" '
        f'(groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n'
        '{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}'
    ) in result.stderr
    # What they hold they may grant.
    assert (
        user.kubectl(
            "create", "role", "ok", "-n", ns, "--verb=get", "--resource=configmaps"
        ).returncode
        == 0
    )
    # Binding a stronger role is refused; binding to cluster-admin across the cluster too.
    result = user.kubectl(
        "create",
        "rolebinding",
        "up",
        "-n",
        ns,
        "--clusterrole=edit",
        f"--user={user.name}",
    )
    assert "is attempting to grant RBAC permissions not currently held" in result.stderr
    assert (
        user.kubectl(
            "create",
            "clusterrolebinding",
            "root",
            "--clusterrole=cluster-admin",
            f"--user={user.name}",
        ).returncode
        != 0
    )
    # Patching their own Role to add rights is refused as well.
    result = user.kubectl(
        "patch",
        "role",
        "ok",
        "-n",
        ns,
        "--type=json",
        "-p",
        '[{"op":"add","path":"/rules/-","value":{"apiGroups":[""],"resources":["secrets"],"verbs":["list"]}}]',
    )
    assert "is attempting to grant RBAC permissions not currently held" in result.stderr
    # With `bind` on the role, binding it is allowed (kube's bind verb).
    kapi_server.kubectl(
        "create",
        "role",
        "binder",
        "-n",
        ns,
        "--verb=bind",
        "--resource=clusterroles",
        "--resource-name=view",
    )
    kapi_server.kubectl(
        "create",
        "rolebinding",
        "binder",
        "-n",
        ns,
        "--role=binder",
        f"--user={user.name}",
    )
    eventually(lambda: user.can_i("bind", "clusterroles/view", "-n", ns))
    assert (
        user.kubectl(
            "create",
            "rolebinding",
            "v",
            "-n",
            ns,
            "--clusterrole=view",
            "--user=someone",
        ).returncode
        == 0
    )


def test_impersonation(kapi_server: KapiServer, make_user, ns) -> None:
    """--as needs the impersonate verb; then the request runs as the other user."""
    boss, target = make_user("boss"), make_user("target")
    result = boss.kubectl("get", "configmaps", "-n", ns, f"--as={target.name}")
    assert (
        f'users "{target.name}" is forbidden: User "{boss.name}" cannot impersonate resource "users" '
        'in API group "" at the cluster scope'
    ) in result.stderr
    kapi_server.kubectl(
        "create",
        "clusterrole",
        f"imp-{boss.name}",
        "--verb=impersonate",
        "--resource=users",
        f"--resource-name={target.name}",
    )
    kapi_server.kubectl(
        "create",
        "clusterrolebinding",
        f"imp-{boss.name}",
        f"--clusterrole=imp-{boss.name}",
        f"--user={boss.name}",
    )
    kapi_server.kubectl(
        "create",
        "rolebinding",
        "t",
        "-n",
        ns,
        "--clusterrole=view",
        f"--user={target.name}",
    )
    eventually(
        lambda: (
            boss.kubectl(
                "get", "configmaps", "-n", ns, f"--as={target.name}"
            ).returncode
            == 0
        )
    )
    who = json.loads(
        boss.kubectl("auth", "whoami", f"--as={target.name}", "-o", "json").stdout
    )
    assert who["status"]["userInfo"]["username"] == target.name
    # Groups need their own permission.
    result = boss.kubectl(
        "get",
        "configmaps",
        "-n",
        ns,
        f"--as={target.name}",
        "--as-group=system:masters",
    )
    assert 'groups "system:masters" is forbidden' in result.stderr


@pytest.mark.parametrize("path", ["/version", "/healthz", "/livez", "/readyz"])
def test_anonymous_allowed_paths(api_anon, path: str) -> None:
    assert api_anon(path).status_code == 200


@pytest.mark.parametrize("path", ["/api", "/apis", "/api/v1/namespaces", "/openapi/v2"])
def test_anonymous_refused(api_anon, path: str) -> None:
    response = api_anon(path)
    assert response.status_code == 401
    assert response.json()["reason"] == "Unauthorized"
