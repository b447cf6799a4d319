"""Core figures: create 2,000 ~1 KiB ConfigMaps with 16 clients, then GET them;
alongside, pgbench doing the same two inserts (object row + change-log row) per
transaction on the same PostgreSQL, and the ratio of the two.

    python bench/core_create.py [--count 2000] [--clients 16] [--kubeconfig KC] [--user NAME]

``--user NAME`` (fresh server only) runs the load as a non-admin Django user
bound to ``edit`` in ``default``: the Django-user token path plus RBAC, instead
of the admin static token. With ``--kubeconfig``, pass a non-admin user's
kubeconfig for the same.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

from _load import django_user, run_load, server, summary

PAYLOAD = "x" * 900  # with metadata, about 1 KiB per object


def configmap(name: str) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "labels": {"bench": "core"}},
        "data": {"payload": PAYLOAD},
    }


def pgbench(data_dir: Path, clients: int, transactions: int) -> float:
    """Raw PostgreSQL: two inserts per transaction into copies of kapi's tables."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from kapi.runtime.config import _embedded_postgres_url

    url = _embedded_postgres_url(data_dir / "postgres")
    setup = """
DROP TABLE IF EXISTS bench_object, bench_change;
CREATE TABLE bench_object (LIKE kapi_object INCLUDING ALL);
CREATE TABLE bench_change (LIKE kapi_change INCLUDING ALL);
"""
    subprocess.run(["psql", url, "-q", "-c", setup], check=True, capture_output=True)
    script = tempfile.NamedTemporaryFile("w", suffix=".sql", delete=False)
    doc = '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"n","namespace":"default"},"data":{"payload":"' + PAYLOAD + '"}}'
    script.write(
        "\\set n random(1, 1000000000)\n"
        "BEGIN;\n"
        "INSERT INTO bench_object (\"group\", resource, namespace, name, uid, resource_version, data, labels) "
        f"VALUES ('', 'configmaps', 'default', 'cm-' || :n || '-' || :client_id, gen_random_uuid(), nextval('kapi_resource_version'), '{doc}', '{{\"bench\":\"core\"}}');\n"
        "INSERT INTO bench_change (resource_version, \"group\", resource, namespace, name, uid, type, data) "
        f"VALUES (currval('kapi_resource_version'), '', 'configmaps', 'default', 'cm-' || :n, gen_random_uuid(), 'ADDED', '{doc}');\n"
        "END;\n"
    )
    script.close()
    pgbench_bin = Path(sys.executable).parent.parent / "lib"
    candidates = list(pgbench_bin.glob("python3*/site-packages/pgserver/pginstall/bin/pgbench"))
    binary = str(candidates[0]) if candidates else "pgbench"
    result = subprocess.run(
        [binary, "-n", "-c", str(clients), "-j", "2", "-t", str(transactions // clients), "-f", script.name, url],
        capture_output=True,
        text=True,
    )
    subprocess.run(["psql", url, "-q", "-c", "DROP TABLE bench_object, bench_change"], capture_output=True)
    match = re.search(r"tps = ([\d.]+)", result.stdout)
    if not match:
        raise SystemExit(f"pgbench failed:\n{result.stdout}\n{result.stderr}")
    return float(match.group(1))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--count", type=int, default=2000)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--kubeconfig")
    parser.add_argument("--user", help="run as this non-admin Django user (edit in default)")
    args = parser.parse_args()
    run = uuid.uuid4().hex[:6]
    with server(args.kubeconfig) as (target, srv):
        if args.user:
            if srv is None:
                raise SystemExit("--user needs a fresh server (no --kubeconfig)")
            target = django_user(srv, target, args.user)
            print(f"as Django user {args.user} (edit in default), RBAC on")
        base = "/api/v1/namespaces/default/configmaps"
        creates = [("POST", base, configmap(f"bench-{run}-{i}"), "application/json", (201,)) for i in range(args.count)]
        created = run_load(target, creates, clients=args.clients)
        print(summary(f"create {args.count} ConfigMaps, {args.clients} clients", created))
        gets = [("GET", f"{base}/bench-{run}-{i}", None, "application/json", (200,)) for i in range(args.count)]
        got = run_load(target, gets, clients=args.clients)
        print(summary(f"get {args.count} ConfigMaps, {args.clients} clients", got))
        if srv is not None:
            tps = pgbench(srv.data_dir, args.clients, args.count * 2)
            print(f"pgbench, same two inserts per transaction, {args.clients} clients: {tps:.0f} tx/s")
            print(f"ratio API creates / raw PostgreSQL: {created['rate'] / tps:.2f} (aim: >= 0.5)")


if __name__ == "__main__":
    main()
