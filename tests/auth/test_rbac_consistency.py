"""A grant is honoured at once by every API process.

The test server runs two API processes. Each keeps its RBAC index in memory and
looks for newer RBAC objects every fraction of a second; a request it would deny
makes it look at once. So a client that has just been granted access (seen by
`kubectl auth can-i` on one process, or simply committed) is never refused by
the other process for a moment afterwards.
"""

from __future__ import annotations

import requests
from kapi_testserver import KapiServer

RESOURCES = ("configmaps", "secrets", "services", "endpoints", "pods")


def _grant(admin: requests.Session, server: KapiServer, ns: str, user: str, resource: str):
    base = f"{server.url}/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}"
    role = {
        "metadata": {"name": f"read-{resource}"},
        "rules": [{"apiGroups": [""], "resources": [resource], "verbs": ["list"]}],
    }
    binding = {
        "metadata": {"name": f"read-{resource}"},
        "roleRef": {
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": "Role",
            "name": f"read-{resource}",
        },
        "subjects": [{"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": user}],
    }
    assert admin.post(f"{base}/roles", json=role, timeout=30).status_code == 201
    assert admin.post(f"{base}/rolebindings", json=binding, timeout=30).status_code == 201


def test_a_grant_is_honoured_by_every_api_process_at_once(
    kapi_server: KapiServer, make_user, ns
) -> None:
    user = make_user("fresh")
    admin = requests.Session()
    admin.trust_env = False
    admin.verify = str(kapi_server.ca_path)
    admin.headers["Authorization"] = f"Bearer {kapi_server.token}"
    for resource in RESOURCES:
        _grant(admin, kapi_server, ns, user.name, resource)
        url = f"{kapi_server.url}/api/v1/namespaces/{ns}/{resource}"
        # A new connection per request, so both API processes answer some.
        codes = [
            requests.get(
                url,
                headers={"Authorization": f"Bearer {user.token}", "Connection": "close"},
                verify=str(kapi_server.ca_path),
                timeout=30,
            ).status_code
            for _ in range(8)
        ]
        assert codes == [200] * 8, (resource, codes)
    # And what was not granted is still refused.
    refused = requests.get(
        f"{kapi_server.url}/api/v1/namespaces/{ns}/serviceaccounts",
        headers={"Authorization": f"Bearer {user.token}"},
        verify=str(kapi_server.ca_path),
        timeout=30,
    )
    assert refused.status_code == 403
    assert refused.json()["reason"] == "Forbidden"
