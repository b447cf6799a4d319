"""Issue #5's figures: kinds, CRDs and OpenAPI.

* kubectl's cold discovery + OpenAPI v3 fetch: ``kubectl explain deployment.spec``
  and ``kubectl api-resources`` with an empty ``--cache-dir``;
* CRD create to the first custom resource create succeeding (raw HTTP: the CRD
  POST, then the CR POST repeated until it answers 201);
* validation cost per Deployment object (the Deployment strategy's ``validate``:
  schema, enums and kube's handwritten rules), in process, in microseconds.

    python bench/kinds.py [--repeat 5] [--calls 2000] [--kubeconfig KC]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid

from _load import ROOT, server

sys.path.insert(0, str(ROOT))


def _kubectl(kubeconfig: str, *args: str) -> None:
    from kapi_testserver import kubectl_binary

    subprocess.run(
        [kubectl_binary(), "--kubeconfig", kubeconfig, *args],
        check=True,
        capture_output=True,
        timeout=120,
    )


def cold_kubectl(kubeconfig: str, repeat: int) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {"explain deployment.spec": [], "api-resources": []}
    for _ in range(repeat):
        for label, args in (
            ("explain deployment.spec", ["explain", "deployment.spec"]),
            ("api-resources", ["api-resources"]),
        ):
            with tempfile.TemporaryDirectory() as cache:
                start = time.perf_counter()
                _kubectl(kubeconfig, *args, "--cache-dir", cache)
                times[label].append(time.perf_counter() - start)
    return times


def _crd(group: str) -> dict:
    from tests.api.crds import crd_manifest

    schema = {
        "type": "object",
        "properties": {"spec": {"type": "object", "properties": {"n": {"type": "integer"}}}},
    }
    return crd_manifest(group, "things", "Thing", schema)


def crd_to_first_cr(target, repeat: int) -> tuple[list[float], list[int]]:
    times, attempts = [], []
    conn = target.connection()
    for _ in range(repeat):
        group = f"b{uuid.uuid4().hex[:8]}.example.com"
        start = time.perf_counter()
        conn.request(
            "POST",
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
            json.dumps(_crd(group)),
            target.headers(),
        )
        response = conn.getresponse()
        response.read()
        assert response.status == 201, response.status
        body = json.dumps(
            {"apiVersion": f"{group}/v1", "kind": "Thing", "metadata": {"name": "a"}, "spec": {"n": 1}}
        )
        for attempt in range(1, 1001):  # noqa: B007 (read after the loop)
            conn.request(
                "POST", f"/apis/{group}/v1/namespaces/default/things", body, target.headers()
            )
            response = conn.getresponse()
            response.read()
            if response.status == 201:
                break
        else:
            raise SystemExit(f"{group}: custom resource never created")
        times.append(time.perf_counter() - start)
        attempts.append(attempt)
    return times, attempts


def deployment() -> dict:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default", "labels": {"app": "web"}},
        "spec": {
            "replicas": 3,
            "selector": {"matchLabels": {"app": "web"}},
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 1}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {
                    "containers": [
                        {
                            "name": "web",
                            "image": "nginx:1.27",
                            "imagePullPolicy": "IfNotPresent",
                            "ports": [{"containerPort": 80, "name": "http", "protocol": "TCP"}],
                            "env": [{"name": "MODE", "value": "prod"}],
                            "resources": {
                                "requests": {"cpu": "100m", "memory": "128Mi"},
                                "limits": {"cpu": "1", "memory": "512Mi"},
                            },
                            "readinessProbe": {"httpGet": {"path": "/", "port": "http"}},
                            "volumeMounts": [{"name": "conf", "mountPath": "/etc/web"}],
                        }
                    ],
                    "volumes": [{"name": "conf", "configMap": {"name": "web"}}],
                    "restartPolicy": "Always",
                },
            },
        },
    }


def validation_cost(calls: int) -> list[float]:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kapi.settings")
    import django

    django.setup()
    from kapi.kinds.builtin import BUILTIN_TYPES

    rt = next(t for t in BUILTIN_TYPES if t.group == "apps" and t.plural == "deployments")
    obj = deployment()
    causes = rt.strategy.validate(obj)
    assert not causes, causes
    samples = []
    for _ in range(calls):
        start = time.perf_counter()
        rt.strategy.validate(obj)
        samples.append((time.perf_counter() - start) * 1e6)
    bad = deployment()
    bad["spec"]["template"]["spec"]["containers"][0]["imagePullPolicy"] = "Sometimes"
    assert rt.strategy.validate(bad), "an invalid Deployment passed validation"
    return samples


def _ms(values: list[float]) -> str:
    return f"median {statistics.median(values) * 1000:.0f} ms, min {min(values) * 1000:.0f}, max {max(values) * 1000:.0f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--kubeconfig")
    args = parser.parse_args()

    samples = validation_cost(args.calls)
    samples.sort()
    print(
        f"Deployment validation per object: p50 {statistics.median(samples):.0f} µs, "
        f"p99 {samples[int(len(samples) * 0.99)]:.0f} µs ({args.calls} calls)"
    )
    with server(args.kubeconfig) as (target, srv):
        kubeconfig = args.kubeconfig or str(srv.kubeconfig_path)
        for label, values in cold_kubectl(kubeconfig, args.repeat).items():
            print(f"kubectl {label}, empty --cache-dir: {_ms(values)} ({args.repeat} runs)")
        times, attempts = crd_to_first_cr(target, args.repeat)
        print(
            f"CRD create -> first custom resource created: {_ms(times)}; "
            f"CR POSTs needed: {attempts}"
        )


if __name__ == "__main__":
    main()
