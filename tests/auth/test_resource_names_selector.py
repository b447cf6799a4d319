"""RBAC ``resourceNames`` with list and watch, as kube-apiserver authorizes them.

A list or watch names no object in its path, but kube's RequestInfoFactory
takes the name from a ``metadata.name`` field selector; so a Role granting
``list``/``watch`` on ``resourceNames: [x]`` allows exactly
``?fieldSelector=metadata.name=x`` (``kubectl get cm x -w`` sends it), and
nothing that could list another object."""

from __future__ import annotations

import json
import subprocess
import threading

import requests
from auth.conftest import eventually
from kapi_testserver import KapiServer, kubectl_binary


def _restricted(kapi_server: KapiServer, make_user, ns: str):
    user = make_user("one-cm")
    k = kapi_server.kubectl
    k("create", "configmap", "x", "-n", ns, "--from-literal=k=v")
    k("create", "configmap", "y", "-n", ns, "--from-literal=k=secret-of-y")
    k(
        "create",
        "role",
        "only-x",
        "-n",
        ns,
        "--verb=get,list,watch",
        "--resource=configmaps",
        "--resource-name=x",
    )
    k(
        "create",
        "rolebinding",
        "only-x",
        "-n",
        ns,
        "--role=only-x",
        f"--user={user.name}",
    )
    eventually(lambda: user.can_i("get", "configmaps/x", "-n", ns))
    return user


def test_list_by_name_field_selector_is_allowed_and_nothing_wider(
    kapi_server: KapiServer, make_user, ns
) -> None:
    """kubectl as the restricted user lists x by field selector; a plain list,
    another name, ``!=`` and a smuggled second selector are all refused."""
    user = _restricted(kapi_server, make_user, ns)

    got = user.kubectl(
        "get", "cm", "-n", ns, "--field-selector", "metadata.name=x", "-o", "name"
    )
    assert got.returncode == 0, got.stderr
    assert got.stdout.split() == ["configmap/x"]

    for selector in ("metadata.name=y", "metadata.name!=y"):
        refused = user.kubectl("get", "cm", "-n", ns, "--field-selector", selector)
        assert refused.returncode != 0
        assert 'cannot list resource "configmaps"' in refused.stderr, refused.stderr
    refused = user.kubectl("get", "cm", "-n", ns)
    assert 'cannot list resource "configmaps"' in refused.stderr, refused.stderr

    # A hostile tenant: the name authorized is the selector the list applies.
    session = requests.Session()
    session.trust_env = False
    base = f"{kapi_server.url}/api/v1/namespaces/{ns}/configmaps"
    headers = {"Authorization": f"Bearer {user.token}"}
    smuggled = session.get(
        base + "?fieldSelector=metadata.name%3Dx&fieldSelector=metadata.name%3Dy",
        headers=headers,
        verify=str(kapi_server.ca_path),
        timeout=30,
    )
    assert smuggled.status_code == 403, smuggled.text
    assert smuggled.json()["reason"] == "Forbidden"
    both = session.get(
        base,
        params={"fieldSelector": "metadata.name=x,metadata.name=y"},
        headers=headers,
        verify=str(kapi_server.ca_path),
        timeout=30,
    )
    assert both.status_code == 200
    assert both.json()["items"] == []
    other_ns = session.get(
        f"{kapi_server.url}/api/v1/configmaps",
        params={"fieldSelector": "metadata.name=x"},
        headers=headers,
        verify=str(kapi_server.ca_path),
        timeout=30,
    )
    assert other_ns.status_code == 403


def test_kubectl_get_one_configmap_watch(
    kapi_server: KapiServer, make_user, ns
) -> None:
    """``kubectl get cm x -w`` as the restricted user streams x's changes
    (its watch is ``?fieldSelector=metadata.name=x&watch=true``) and never y."""
    user = _restricted(kapi_server, make_user, ns)
    watcher = subprocess.Popen(
        [
            kubectl_binary(),
            "--kubeconfig",
            str(user.kubeconfig),
            "get",
            "cm",
            "x",
            "-n",
            ns,
            "-w",
            "-o",
            "json",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    seen: list[dict] = []
    buffer: list[str] = []

    def read() -> None:
        # ``-o json`` prints one pretty object per event; collect whole objects.
        for line in watcher.stdout:
            buffer.append(line)
            try:
                seen.append(json.loads("".join(buffer)))
            except json.JSONDecodeError:
                continue
            buffer.clear()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        eventually(lambda: len(seen) >= 1, timeout=30)
        k = kapi_server.kubectl
        k("label", "cm", "y", "-n", ns, "seen=no")
        k("label", "cm", "x", "-n", ns, "seen=yes")
        eventually(
            lambda: any(
                (o["metadata"].get("labels") or {}).get("seen") == "yes" for o in seen
            ),
            timeout=30,
        )
        assert watcher.poll() is None, watcher.stderr.read()
    finally:
        watcher.terminate()
        watcher.wait(timeout=30)
        reader.join(timeout=30)
    err = watcher.stderr.read()
    assert {o["metadata"]["name"] for o in seen} == {"x"}
    assert "Forbidden" not in err, err
