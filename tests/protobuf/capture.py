"""Protobuf fixture capture: record the bodies real kubectl sends.

A tiny HTTPS server on 127.0.0.1 answers just enough discovery for kubectl's
``create`` commands and records every POST body. For each case in ``CASES`` the
body of ``kubectl create ... --dry-run=server`` (Kubernetes protobuf) is saved as
``fixtures/<name>.bin`` and the output of ``--dry-run=client -o json`` (the
same object as JSON) as ``fixtures/<name>.json``. Regenerate with::

    python tests/protobuf/capture.py
"""

from __future__ import annotations

import datetime
import json
import ssl
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

__all__ = ["CASES", "FIXTURES", "CaptureServer", "capture", "capture_server", "main"]

FIXTURES = Path(__file__).resolve().parent / "fixtures"
KUBECTL = Path(sys.executable).parent / "kubectl"

# name → kubectl arguments after "create"
CASES: dict[str, list[str]] = {
    "configmap": ["configmap", "cm1", "--from-literal=a=b", "--from-literal=empty="],
    "secret_generic": ["secret", "generic", "s1", "--from-literal=user=admin"],
    "secret_tls_like": [
        "secret",
        "docker-registry",
        "reg1",
        "--docker-server=r.example",
        "--docker-username=u",
        "--docker-password=p",
    ],
    "namespace": ["namespace", "ns1"],
    "serviceaccount": ["serviceaccount", "sa1"],
    "deployment": [
        "deployment",
        "web",
        "--image=nginx:1.27",
        "--replicas=3",
        "--port=80",
        "--",
        "nginx",
        "-g",
        "daemon off;",
    ],
    "job": ["job", "j1", "--image=busybox", "--", "echo", "hi"],
    "cronjob": ["cronjob", "cj1", "--image=busybox", "--schedule=*/5 * * * *"],
    "role": ["role", "r1", "--verb=get,list", "--resource=pods,deployments.apps"],
    "rolebinding": ["rolebinding", "rb1", "--role=r1", "--user=alice", "--group=devs"],
    "clusterrole": ["clusterrole", "cr1", "--verb=get", "--non-resource-url=/healthz"],
    "clusterrole_aggregated": ["clusterrole", "cr2", "--aggregation-rule=team=a"],
    "clusterrolebinding": [
        "clusterrolebinding",
        "crb1",
        "--clusterrole=cr1",
        "--serviceaccount=default:sa1",
    ],
    "service_clusterip": ["service", "clusterip", "svc1", "--tcp=80:8080", "--tcp=443"],
    "service_nodeport": ["service", "nodeport", "svc2", "--tcp=80:http"],
    "ingress": [
        "ingress",
        "ing1",
        "--class=nginx",
        "--rule=foo.example/bar*=svc1:8080,tls=sec1",
        "--annotation=a=b",
    ],
    "poddisruptionbudget": [
        "poddisruptionbudget",
        "pdb1",
        "--selector=app=web",
        "--min-available=50%",
    ],
    "priorityclass": ["priorityclass", "pc1", "--value=1000", "--description=high"],
    "quota": ["quota", "q1", "--hard=cpu=1,memory=1G,pods=2", "--scopes=BestEffort"],
}

# Just enough discovery for kubectl's RESTMapper: group version → (resource, kind, namespaced).
_RESOURCES: dict[str, list[tuple[str, str, bool]]] = {
    "v1": [
        ("configmaps", "ConfigMap", True),
        ("secrets", "Secret", True),
        ("namespaces", "Namespace", False),
        ("serviceaccounts", "ServiceAccount", True),
        ("services", "Service", True),
        ("resourcequotas", "ResourceQuota", True),
        ("pods", "Pod", True),
    ],
    "apps/v1": [("deployments", "Deployment", True)],
    "batch/v1": [("jobs", "Job", True), ("cronjobs", "CronJob", True)],
    "rbac.authorization.k8s.io/v1": [
        ("roles", "Role", True),
        ("rolebindings", "RoleBinding", True),
        ("clusterroles", "ClusterRole", False),
        ("clusterrolebindings", "ClusterRoleBinding", False),
    ],
    "networking.k8s.io/v1": [("ingresses", "Ingress", True)],
    "policy/v1": [("poddisruptionbudgets", "PodDisruptionBudget", True)],
    "scheduling.k8s.io/v1": [("priorityclasses", "PriorityClass", False)],
}


class CaptureServer(ThreadingHTTPServer):
    """An HTTPS server that records ``(path, content type, body)`` of each POST."""

    daemon_threads = True

    def __init__(self, address: tuple[str, int]) -> None:
        super().__init__(address, _Handler)
        self.posts: list[tuple[str, str, bytes]] = []


class _Handler(BaseHTTPRequestHandler):
    server: CaptureServer

    def log_message(self, format: str, *args: object) -> None:
        pass

    def _json(self, code: int, body: object) -> None:
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        path = self.path.split("?")[0]
        if path == "/api":
            self._json(200, {"kind": "APIVersions", "versions": ["v1"]})
        elif path == "/apis":
            groups = []
            for group_version in _RESOURCES:
                if "/" in group_version:
                    group, version = group_version.split("/")
                    gv = {"groupVersion": group_version, "version": version}
                    groups.append(
                        {"name": group, "versions": [gv], "preferredVersion": gv}
                    )
            self._json(
                200, {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}
            )
        elif path in ("/api/v1",) or path.removeprefix("/apis/") in _RESOURCES:
            group_version = "v1" if path == "/api/v1" else path.removeprefix("/apis/")
            resources = [
                {
                    "name": name,
                    "singularName": "",
                    "namespaced": namespaced,
                    "kind": kind,
                    "verbs": ["create", "delete", "get", "list", "patch", "update"],
                }
                for name, kind, namespaced in _RESOURCES[group_version]
            ]
            self._json(
                200,
                {
                    "kind": "APIResourceList",
                    "apiVersion": "v1",
                    "groupVersion": group_version,
                    "resources": resources,
                },
            )
        else:
            self._json(
                404,
                {
                    "kind": "Status",
                    "apiVersion": "v1",
                    "status": "Failure",
                    "reason": "NotFound",
                    "code": 404,
                },
            )

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length)
        self.server.posts.append(
            (self.path, self.headers.get("Content-Type", ""), body)
        )
        # kubectl only needs a name in the answer to print "<kind>/<name> created".
        self._json(201, {"metadata": {"name": "captured"}})


def _self_signed(directory: Path) -> tuple[Path, Path]:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "capture")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = directory / "tls.crt", directory / "tls.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


@contextmanager
def capture_server() -> Iterator[tuple[CaptureServer, Path]]:
    """Run a capture server; yield it and a kubeconfig pointing at it."""
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        cert_path, key_path = _self_signed(directory)
        server = CaptureServer(("127.0.0.1", 0))
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert_path, key_path)
        server.socket = context.wrap_socket(server.socket, server_side=True)
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        kubeconfig = directory / "kubeconfig"
        kubeconfig.write_text(
            json.dumps(
                {
                    "apiVersion": "v1",
                    "kind": "Config",
                    "clusters": [
                        {
                            "name": "capture",
                            "cluster": {
                                "server": f"https://127.0.0.1:{server.server_port}",
                                "insecure-skip-tls-verify": True,
                            },
                        }
                    ],
                    "users": [{"name": "capture", "user": {"token": "capture"}}],
                    "contexts": [
                        {
                            "name": "capture",
                            "context": {
                                "cluster": "capture",
                                "user": "capture",
                                "namespace": "default",
                            },
                        }
                    ],
                    "current-context": "capture",
                }
            )
        )
        try:
            yield server, kubeconfig
        finally:
            server.shutdown()
            server.server_close()
            thread.join(5)


def capture(
    server: CaptureServer, kubeconfig: Path, args: list[str]
) -> tuple[bytes, dict]:
    """Run ``kubectl create <args>`` twice; return (protobuf body, client JSON)."""
    cache = kubeconfig.parent / "cache"
    base = [
        str(KUBECTL),
        f"--kubeconfig={kubeconfig}",
        f"--cache-dir={cache}",
        "create",
    ]
    split = args.index("--") if "--" in args else len(args)
    head, tail = args[:split], args[split:]
    server.posts.clear()
    result = subprocess.run(
        [*base, *head, "--dry-run=server", *tail],
        check=False,
        capture_output=True,
        timeout=60,
    )
    if result.returncode:
        raise RuntimeError(f"kubectl create {' '.join(args)}: {result.stderr.decode()}")
    ((path, content_type, body),) = server.posts
    if content_type != "application/vnd.kubernetes.protobuf":
        raise RuntimeError(f"kubectl sent {content_type} to {path}, not protobuf")
    out = subprocess.run(
        [*base, *head, "--dry-run=client", "-o", "json", *tail],
        check=True,
        capture_output=True,
        timeout=60,
    ).stdout
    return body, json.loads(out)


def main() -> None:
    FIXTURES.mkdir(exist_ok=True)
    with capture_server() as (server, kubeconfig):
        for name, args in CASES.items():
            body, obj = capture(server, kubeconfig, args)
            (FIXTURES / f"{name}.bin").write_bytes(body)
            (FIXTURES / f"{name}.json").write_text(
                json.dumps(obj, indent=2, sort_keys=True) + "\n"
            )
            print(f"{name}: {len(body)} bytes")


if __name__ == "__main__":
    main()
