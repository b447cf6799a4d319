"""ServiceAccount tokens (kubectl create token), expiry, deleted accounts, the
audit log, and request hardening (YAML bombs, oversized bodies, admin CSRF)."""

from __future__ import annotations

import json
import time

import jwt
import requests
from auth.conftest import eventually
from cryptography.hazmat.primitives import serialization
from kapi_testserver import KapiServer


def _get(server: KapiServer, path: str, token: str, **kwargs) -> requests.Response:
    return requests.get(
        server.url + path,
        headers={"Authorization": f"Bearer {token}"},
        verify=str(server.ca_path),
        timeout=30,
        **kwargs,
    )


def test_create_token_and_use_it(kapi_server: KapiServer, ns: str) -> None:
    """A TokenRequest token authenticates as the ServiceAccount until it is deleted."""
    kapi_server.kubectl("create", "serviceaccount", "bot", "-n", ns)
    kapi_server.kubectl(
        "create",
        "rolebinding",
        "bot",
        "-n",
        ns,
        "--clusterrole=view",
        f"--serviceaccount={ns}:bot",
    )
    token = kapi_server.kubectl(
        "create", "token", "bot", "-n", ns, "--duration=15m"
    ).stdout.strip()
    claims = jwt.decode(token, options={"verify_signature": False})
    assert claims["sub"] == f"system:serviceaccount:{ns}:bot"
    assert claims["kubernetes.io"]["namespace"] == ns
    assert claims["exp"] - claims["iat"] == 900
    eventually(
        lambda: (
            _get(kapi_server, f"/api/v1/namespaces/{ns}/configmaps", token).status_code
            == 200
        )
    )
    assert (
        _get(kapi_server, "/api/v1/namespaces/default/configmaps", token).status_code
        == 403
    )
    # TokenReview answers for other services.
    review = kapi_server.kubectl(
        "create",
        "-o",
        "json",
        "-f",
        "-",
        input=json.dumps(
            {
                "apiVersion": "authentication.k8s.io/v1",
                "kind": "TokenReview",
                "spec": {"token": token},
            }
        ),
    )
    status = json.loads(review.stdout)["status"]
    assert status["authenticated"] is True
    assert status["user"]["username"] == f"system:serviceaccount:{ns}:bot"
    # A token for another audience does not authenticate to the API server.
    other = kapi_server.kubectl(
        "create", "token", "bot", "-n", ns, "--audience=vault"
    ).stdout.strip()
    assert (
        _get(kapi_server, f"/api/v1/namespaces/{ns}/configmaps", other).status_code
        == 401
    )
    # Less than ten minutes is refused, as in kube.
    short = kapi_server.kubectl(
        "create", "token", "bot", "-n", ns, "--duration=1m", check=False
    )
    assert "may not specify a duration less than 10 minutes" in short.stderr
    # Deleting the ServiceAccount ends its tokens.
    kapi_server.kubectl("delete", "serviceaccount", "bot", "-n", ns)
    assert (
        _get(kapi_server, f"/api/v1/namespaces/{ns}/configmaps", token).status_code
        == 401
    )


def test_token_expiry(kapi_server: KapiServer, ns: str) -> None:
    """An expired ServiceAccount token is refused with 401."""
    kapi_server.kubectl("create", "serviceaccount", "short", "-n", ns)
    uid = json.loads(
        kapi_server.kubectl("get", "sa", "short", "-n", ns, "-o", "json").stdout
    )["metadata"]["uid"]
    key_file = sorted((kapi_server.data_dir / "signing-keys").glob("key-*.pem"))[-1]
    key = serialization.load_pem_private_key(key_file.read_bytes(), password=None)
    now = int(time.time())
    token = jwt.encode(
        {
            "iss": "https://kubernetes.default.svc.cluster.local",
            "aud": ["https://kubernetes.default.svc.cluster.local"],
            "sub": f"system:serviceaccount:{ns}:short",
            "iat": now,
            "nbf": now,
            "exp": now + 2,
            "kubernetes.io": {
                "namespace": ns,
                "serviceaccount": {"name": "short", "uid": uid},
            },
        },
        key,
        algorithm="RS256",
    )
    assert _get(kapi_server, "/apis/authentication.k8s.io/v1", token).status_code in (
        200,
        403,
    )
    time.sleep(3)
    response = _get(kapi_server, "/apis/authentication.k8s.io/v1", token)
    assert response.status_code == 401


def test_audit_lines_for_mutations_and_denials(
    kapi_server: KapiServer, make_user, ns: str
) -> None:
    """Every mutating request and every denial is one audit.k8s.io/v1 Event line;
    Secret data never appears."""
    kapi_server.kubectl(
        "create",
        "secret",
        "generic",
        "s",
        "-n",
        ns,
        "--from-literal=password=hunter2-xyzzy",
    )
    kapi_server.kubectl("label", "secret", "s", "-n", ns, "a=b")
    kapi_server.kubectl("delete", "secret", "s", "-n", ns)
    user = make_user("audited")
    user.kubectl("get", "secrets", "-n", ns)
    text = (kapi_server.data_dir / "audit.log").read_text()
    assert "hunter2-xyzzy" not in text
    events = [json.loads(line) for line in text.splitlines()]
    mine = [e for e in events if (e.get("objectRef") or {}).get("namespace") == ns]
    verbs = [
        (e["verb"], e["objectRef"]["resource"], e["responseStatus"]["code"])
        for e in mine
    ]
    assert ("create", "secrets", 201) in verbs
    assert ("patch", "secrets", 200) in verbs
    assert ("delete", "secrets", 200) in verbs
    denied = [e for e in mine if e["responseStatus"]["code"] == 403]
    assert denied and denied[-1]["user"]["username"] == user.name
    assert denied[-1]["annotations"]["authorization.k8s.io/decision"] == "forbid"
    for e in mine:
        assert (
            e["apiVersion"] == "audit.k8s.io/v1"
            and e["kind"] == "Event"
            and e["level"] == "Metadata"
        )
        assert (
            e["stage"] == "ResponseComplete"
            and e["auditID"]
            and e["requestReceivedTimestamp"]
        )


def test_forwarded_for_does_not_replace_the_client_address(kapi_server: KapiServer, ns: str) -> None:
    """X-Forwarded-For is the client's word: the audit lists it, then the
    connection's own address last (kube's SourceIPs), and the address that
    counts (audit, admin sign-in throttle) stays the connection's."""
    response = requests.post(
        f"{kapi_server.url}/api/v1/namespaces/{ns}/configmaps",
        headers={
            "Authorization": f"Bearer {kapi_server.token}",
            "X-Forwarded-For": "203.0.113.7, 198.51.100.9",
        },
        json={"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "forwarded"}},
        verify=str(kapi_server.ca_path),
        timeout=30,
    )
    assert response.status_code == 201, response.text

    # Written before the answer (blocking audit).
    events = [json.loads(line) for line in (kapi_server.data_dir / "audit.log").read_text().splitlines()]
    (event,) = [
        e for e in events
        if (e.get("objectRef") or {}).get("namespace") == ns and e["objectRef"].get("name") == "forwarded"
    ]
    assert event["sourceIPs"] == ["203.0.113.7", "198.51.100.9", "127.0.0.1"]


def test_yaml_bomb_refused(kapi_server: KapiServer, ns: str) -> None:
    """A billion-laughs document is refused with 400 before it is expanded."""
    lines = [
        "apiVersion: v1",
        "kind: ConfigMap",
        "metadata: {name: bomb}",
        "x:",
        '  a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]',
    ]
    prev = "a"
    for name in "bcdefghi":
        lines.append(f"  {name}: &{name} [" + ",".join([f"*{prev}"] * 9) + "]")
        prev = name
    body = "\n".join(lines) + "\n"
    response = requests.post(
        f"{kapi_server.url}/api/v1/namespaces/{ns}/configmaps",
        data=body,
        headers={
            "Authorization": f"Bearer {kapi_server.token}",
            "Content-Type": "application/yaml",
        },
        verify=str(kapi_server.ca_path),
        timeout=30,
    )
    assert response.status_code == 400, response.text
    assert "excessive aliasing" in response.json()["message"]
    deep = "[" * 5000 + "]" * 5000
    response = requests.post(
        f"{kapi_server.url}/api/v1/namespaces/{ns}/configmaps",
        data=deep,
        headers={
            "Authorization": f"Bearer {kapi_server.token}",
            "Content-Type": "application/json",
        },
        verify=str(kapi_server.ca_path),
        timeout=30,
    )
    assert response.status_code == 400, response.text


def test_four_mib_body_refused(kapi_server: KapiServer, ns: str) -> None:
    body = json.dumps(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "big"},
            "data": {"x": "a" * (4 * 1024 * 1024)},
        }
    )
    response = requests.post(
        f"{kapi_server.url}/api/v1/namespaces/{ns}/configmaps",
        data=body,
        headers={
            "Authorization": f"Bearer {kapi_server.token}",
            "Content-Type": "application/json",
        },
        verify=str(kapi_server.ca_path),
        timeout=60,
    )
    assert response.status_code == 413


def test_admin_login_needs_csrf(kapi_server: KapiServer) -> None:
    """The admin login form refuses a POST without Django's CSRF token."""
    response = requests.post(
        f"{kapi_server.url}/admin/login/",
        data={"username": "admin", "password": "x"},
        verify=str(kapi_server.ca_path),
        timeout=30,
    )
    assert response.status_code == 403
    assert "CSRF" in response.text


def test_audit_of_unauthenticated_requests_has_kube_verb_and_object(
    kapi_server: KapiServer, ns: str
) -> None:
    """kube's audit events carry RequestInfo's verb and objectRef even for a 401."""
    base = f"{kapi_server.url}/api/v1/namespaces/{ns}/configmaps"
    bad = {"Authorization": "Bearer not-a-token"}
    calls = [
        ("GET", f"{base}/cm1", bad, None),
        ("GET", base, {}, None),
        ("GET", f"{base}?watch=true", bad, None),
        (
            "POST",
            base,
            bad,
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "n"}},
        ),
        (
            "PUT",
            f"{base}/cm1",
            {},
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm1"}},
        ),
        ("PATCH", f"{base}/cm1", bad, {}),
        ("DELETE", f"{base}/cm1", bad, None),
        ("DELETE", base, {}, None),
        (
            "GET",
            f"{kapi_server.url}/apis/apps/v1/namespaces/{ns}/deployments/d/scale",
            bad,
            None,
        ),
    ]
    for method, url, headers, body in calls:
        response = requests.request(
            method,
            url,
            headers={**headers, "Content-Type": "application/merge-patch+json"}
            if method == "PATCH"
            else headers,
            json=body,
            verify=str(kapi_server.ca_path),
            timeout=30,
        )
        assert response.status_code == 401, (method, url, response.text)
    events = [
        json.loads(line)
        for line in (kapi_server.data_dir / "audit.log").read_text().splitlines()
    ]
    mine = [
        e
        for e in events
        if f"/namespaces/{ns}/" in e["requestURI"]
        and e["responseStatus"]["code"] == 401
    ]
    got = [
        (
            e["verb"],
            e["objectRef"].get("resource"),
            e["objectRef"].get("name", ""),
            e["objectRef"].get("subresource", ""),
        )
        for e in mine
    ]
    assert got == [
        ("get", "configmaps", "cm1", ""),
        ("list", "configmaps", "", ""),
        ("watch", "configmaps", "", ""),
        ("create", "configmaps", "", ""),
        ("update", "configmaps", "cm1", ""),
        ("patch", "configmaps", "cm1", ""),
        ("delete", "configmaps", "cm1", ""),
        ("deletecollection", "configmaps", "", ""),
        ("get", "deployments", "d", "scale"),
    ]
    for e in mine:
        assert e["objectRef"]["namespace"] == ns
        assert e["objectRef"]["apiVersion"] == "v1"
        assert e["user"] == {}
        assert e["responseStatus"]["reason"] == "Unauthorized"
    assert mine[-1]["objectRef"]["apiGroup"] == "apps"
