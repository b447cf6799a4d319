"""Cost of CRD validation rules (CEL) per custom resource, in process.

Builds a CRD version with ``--rules`` ``x-kubernetes-validations`` rules of the
kinds real CRDs use (field comparisons, list macros, regexes, kube's quantity,
ip/cidr and optional libraries) and times, for one custom resource:

* the CRD check (parse, references, cost estimate) of all rules, cold;
* ``CustomResourceStrategy.validate`` (schema + list types + rules) warm;
* refusing a quadratic rule over a 2,000-item list by its run-time cost
  estimate (the guard that keeps the rule from running for seconds).

    python bench/cel_rules.py [--rules 40] [--calls 300]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kapi.settings")

_KINDS = [
    "self.replicas <= self.maxReplicas",
    "self.ports.all(p, p.port > 0 && p.port < 65536)",
    "self.ports.exists_one(p, p.name == 'http') || size(self.ports) == 0",
    "self.host.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')",
    "quantity(self.memory).compareTo(quantity('64Gi')) < 0",
    "cidr('10.0.0.0/8').containsIP(ip(self.address))",
    "self.?limits.?cpu.orValue(1) <= 64",
    "self.tags.all(t, t.lowerAscii() == t)",
]


def _schema(rules: int) -> dict:
    spec_rules = [
        {"rule": f"({_KINDS[i % len(_KINDS)]}) || {i} < 0", "message": f"rule {i}"}
        for i in range(rules)
    ]
    return {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "x-kubernetes-validations": spec_rules,
                "properties": {
                    "replicas": {"type": "integer"},
                    "maxReplicas": {"type": "integer"},
                    "host": {"type": "string", "maxLength": 63},
                    "memory": {"type": "string", "maxLength": 16},
                    "address": {"type": "string", "maxLength": 45},
                    "limits": {
                        "type": "object",
                        "properties": {"cpu": {"type": "integer"}},
                    },
                    "tags": {
                        "type": "array",
                        "maxItems": 16,
                        "items": {"type": "string", "maxLength": 63},
                    },
                    "ports": {
                        "type": "array",
                        "maxItems": 64,
                        "x-kubernetes-list-type": "map",
                        "x-kubernetes-list-map-keys": ["port"],
                        "items": {
                            "type": "object",
                            "properties": {
                                "name": {"type": "string", "maxLength": 15},
                                "port": {"type": "integer"},
                            },
                        },
                    },
                    "pairs": {
                        "type": "array",
                        "maxItems": 2000,
                        "items": {"type": "integer"},
                        "x-kubernetes-validations": [
                            {"rule": "self.all(x, self.all(y, true))"}
                        ],
                    },
                },
            }
        },
    }


def _percentiles(samples: list[float]) -> str:
    samples = sorted(samples)
    p50 = statistics.median(samples)
    p99 = samples[int(len(samples) * 0.99) - 1]
    return f"p50 {p50 * 1e6:,.0f} µs, p99 {p99 * 1e6:,.0f} µs"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rules", type=int, default=40)
    parser.add_argument("--calls", type=int, default=300)
    args = parser.parse_args()
    import django

    django.setup()
    from kapi.kinds.custom import CustomResourceStrategy
    from kapi.registry.structural import compile_rules

    schema = _schema(args.rules)
    started = time.perf_counter()
    causes = compile_rules(schema, "openAPIV3Schema")
    compile_seconds = time.perf_counter() - started
    assert not causes, causes
    crd = {
        "metadata": {"name": "benches.b.example.com"},
        "spec": {
            "group": "b.example.com",
            "names": {"plural": "benches", "kind": "Bench"},
        },
    }
    version = {"name": "v1", "schema": {"openAPIV3Schema": schema}}
    strategy = CustomResourceStrategy(crd, version)
    obj = {
        "apiVersion": "b.example.com/v1",
        "kind": "Bench",
        "metadata": {"name": "one", "namespace": "default"},
        "spec": {
            "replicas": 2,
            "maxReplicas": 5,
            "host": "web-1",
            "memory": "512Mi",
            "address": "10.1.2.3",
            "limits": {"cpu": 4},
            "tags": ["a", "b"],
            "ports": [{"name": "http", "port": 80}, {"name": "https", "port": 443}],
        },
    }
    assert strategy.validate(obj) == []
    samples = []
    for _ in range(args.calls):
        started = time.perf_counter()
        strategy.validate(obj)
        samples.append(time.perf_counter() - started)
    heavy = {**obj, "spec": {**obj["spec"], "pairs": list(range(2000))}}
    started = time.perf_counter()
    refused = strategy.validate(heavy)
    refuse_seconds = time.perf_counter() - started
    assert refused and "cost" in refused[0].message, refused
    print(f"rules: {args.rules} at spec (+1 quadratic list rule)")
    print(f"CRD check of all rules, cold: {compile_seconds * 1e3:,.1f} ms")
    print(f"validate one custom resource, warm: {_percentiles(samples)}")
    print(f"refuse the quadratic rule over 2,000 items: {refuse_seconds * 1e3:,.1f} ms")


if __name__ == "__main__":
    main()
