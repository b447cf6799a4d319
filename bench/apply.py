"""Server-side apply figures: apply 2,000 ~1 KiB ConfigMaps with 16 clients
(create phase, 201), then apply the same configurations again (unchanged
re-apply, 200, no write), next to plain create (POST) for comparison.

    python bench/apply.py [--count 2000] [--clients 16] [--kubeconfig KC]
"""

from __future__ import annotations

import argparse
import uuid

from _load import run_load, server, summary

PAYLOAD = "x" * 900  # with metadata, about 1 KiB per object
APPLY = "application/apply-patch+yaml"


def configmap(name: str) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "labels": {"bench": "apply"}},
        "data": {"payload": PAYLOAD},
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--count", type=int, default=2000)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--kubeconfig")
    args = parser.parse_args()
    run = uuid.uuid4().hex[:6]
    base = "/api/v1/namespaces/default/configmaps"
    query = "?fieldManager=bench"
    with server(args.kubeconfig) as (target, _srv):
        label = f"{args.count} ConfigMaps, {args.clients} clients"
        applies = [
            (
                "PATCH",
                f"{base}/apply-{run}-{i}{query}",
                configmap(f"apply-{run}-{i}"),
                APPLY,
                (201,),
            )
            for i in range(args.count)
        ]
        created = run_load(target, applies, clients=args.clients)
        print(summary(f"apply (create) {label}", created))
        again = [(m, p, b, c, (200,)) for m, p, b, c, _ in applies]
        unchanged = run_load(target, again, clients=args.clients)
        print(summary(f"apply (unchanged) {label}", unchanged))
        posts = [
            ("POST", base, configmap(f"post-{run}-{i}"), "application/json", (201,))
            for i in range(args.count)
        ]
        plain = run_load(target, posts, clients=args.clients)
        print(summary(f"plain create (POST) {label}", plain))


if __name__ == "__main__":
    main()
