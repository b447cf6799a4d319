"""ClusterRole aggregation written back into ``.rules`` by the lifecycle worker,
seen through kubectl: a ClusterRole labelled ``aggregate-to-view`` for a custom
resource lands in ``view`` (and through the chain in ``edit`` and ``admin``), a
user bound to ``view`` may then list that resource; dropping the label takes the
rule out again and the user is refused."""

from __future__ import annotations

import json
import uuid

from auth.conftest import eventually
from kapi_testserver import KapiServer

AGG_VIEW = "rbac.authorization.k8s.io/aggregate-to-view"


def _crd(group: str) -> str:
    return json.dumps(
        {
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": f"gadgets.{group}"},
            "spec": {
                "group": group,
                "scope": "Namespaced",
                "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
                "versions": [
                    {
                        "name": "v1",
                        "served": True,
                        "storage": True,
                        "schema": {
                            "openAPIV3Schema": {
                                "type": "object",
                                "x-kubernetes-preserve-unknown-fields": True,
                            }
                        },
                    }
                ],
            },
        }
    )


def _rules(server: KapiServer, name: str) -> list[dict]:
    out = server.kubectl("get", "clusterrole", name, "-o", "json").stdout
    return json.loads(out).get("rules") or []


def test_bootstrap_roles_hold_their_aggregated_rules(kapi_server: KapiServer) -> None:
    """As in kube, ``view``'s rules are those of system:aggregate-to-view, and
    ``admin`` takes in ``edit`` (which takes in ``view``)."""
    view = _rules(kapi_server, "view")
    assert view == _rules(kapi_server, "system:aggregate-to-view")
    edit, admin = _rules(kapi_server, "edit"), _rules(kapi_server, "admin")
    assert all(rule in edit for rule in view)
    assert all(rule in admin for rule in edit)
    described = kapi_server.kubectl("describe", "clusterrole", "admin").stdout
    assert "rolebindings.rbac.authorization.k8s.io" in described
    assert "deployments.apps" in described


def test_label_aggregates_custom_resource_into_view(
    kapi_server: KapiServer, make_user, ns
) -> None:
    group = f"agg{uuid.uuid4().hex[:6]}.example.com"
    kapi_server.kubectl("apply", "-f", "-", input=_crd(group))
    eventually(
        lambda: (
            kapi_server.kubectl(
                "get", f"gadgets.{group}", "-n", ns, check=False
            ).returncode
            == 0
        ),
        timeout=20,
    )
    viewer = make_user("aggviewer")
    kapi_server.kubectl(
        "create",
        "rolebinding",
        "viewers",
        "-n",
        ns,
        "--clusterrole=view",
        f"--user={viewer.name}",
    )
    denied = viewer.kubectl("get", f"gadgets.{group}", "-n", ns)
    assert denied.returncode != 0
    assert f'cannot list resource "gadgets" in API group "{group}"' in denied.stderr

    role = f"gadget-reader-{uuid.uuid4().hex[:6]}"
    kapi_server.kubectl(
        "create",
        "clusterrole",
        role,
        "--verb=get,list,watch",
        f"--resource=gadgets.{group}",
    )
    kapi_server.kubectl("label", "clusterrole", role, f"{AGG_VIEW}=true")
    rule = {
        "apiGroups": [group],
        "resources": ["gadgets"],
        "verbs": ["get", "list", "watch"],
    }
    eventually(lambda: rule in _rules(kapi_server, "view"), timeout=15)
    # The chain converges too: edit takes in view, admin takes in edit.
    eventually(lambda: rule in _rules(kapi_server, "admin"), timeout=15)
    assert (
        f"gadgets.{group}"
        in kapi_server.kubectl("describe", "clusterrole", "view").stdout
    )
    managers = json.loads(
        kapi_server.kubectl(
            "get", "clusterrole", "view", "-o", "json", "--show-managed-fields"
        ).stdout
    )["metadata"]["managedFields"]
    assert "clusterrole-aggregation-controller" in {m["manager"] for m in managers}
    eventually(
        lambda: viewer.kubectl("get", f"gadgets.{group}", "-n", ns).returncode == 0
    )
    assert viewer.can_i("list", f"gadgets.{group}", "-n", ns)

    kapi_server.kubectl("label", "clusterrole", role, f"{AGG_VIEW}-")
    eventually(lambda: rule not in _rules(kapi_server, "view"), timeout=15)
    eventually(lambda: rule not in _rules(kapi_server, "admin"), timeout=15)
    eventually(lambda: not viewer.can_i("list", f"gadgets.{group}", "-n", ns))

    # Deleting a labelled role takes its rules out as well.
    kapi_server.kubectl("label", "clusterrole", role, f"{AGG_VIEW}=true")
    eventually(lambda: rule in _rules(kapi_server, "view"), timeout=15)
    kapi_server.kubectl("delete", "clusterrole", role)
    eventually(lambda: rule not in _rules(kapi_server, "view"), timeout=15)
    kapi_server.kubectl("delete", "crd", f"gadgets.{group}", "--wait=false")


def test_aggregation_rule_needs_full_authority(
    kapi_server: KapiServer, make_user
) -> None:
    """kube: an aggregationRule can gather anything, so only someone holding
    every permission may set one, even with rules it holds itself."""
    user = make_user("aggwriter")
    name = f"agg-{uuid.uuid4().hex[:6]}"
    kapi_server.kubectl(
        "create",
        "clusterrole",
        f"{name}-w",
        "--verb=create,get",
        "--resource=clusterroles.rbac.authorization.k8s.io",
    )
    kapi_server.kubectl(
        "create",
        "clusterrolebinding",
        f"{name}-w",
        f"--clusterrole={name}-w",
        f"--user={user.name}",
    )
    eventually(lambda: user.can_i("create", "clusterroles.rbac.authorization.k8s.io"))
    result = user.kubectl(
        "create", "clusterrole", name, f"--aggregation-rule=team={name}"
    )
    assert result.returncode != 0
    assert (
        "must have cluster-admin privileges to use the aggregationRule" in result.stderr
    )
    ok = kapi_server.kubectl(
        "create", "clusterrole", name, f"--aggregation-rule=team={name}"
    )
    assert ok.returncode == 0
