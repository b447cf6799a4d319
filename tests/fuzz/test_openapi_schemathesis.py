"""schemathesis against kapi's own ``/openapi/v3``: every shape of operation
(handler, method, parameters, request body, scope, subresource: see
``_shape``) of the group-versions the index lists (built-in groups,
``sync.kapi.dev`` and a CRD created for the run), with valid (positive) and
invalid (negative) requests, a fixed seed (``derandomize``) and a fixed budget
per shape. No request may get a 5xx and ``serve`` may log no unhandled
exception.

The fuzzer deletes collections (cluster roles, CRDs...), so it gets its own
``serve`` instead of the session's. The CRD's group and ``sync.kapi.dev`` go
first, then the core group, and ``apiextensions.k8s.io`` last, so the CRD is
still served while its own operations are fuzzed.
"""

from __future__ import annotations

import json
import os
import time
from collections import Counter
from collections.abc import Iterator

import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, given, settings
from kapi_testserver import (
    KapiServer,
    serving,
)
from schemathesis import GenerationMode

#: Cases per operation shape and generation mode (40-odd shapes, two modes).
CASES = int(os.environ.get("KAPI_FUZZ_OPENAPI_CASES", "4"))
NAMESPACE = "fuzz"
CRD_GROUP = "fuzz.example.com"
CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": f"widgets.{CRD_GROUP}"},
    "spec": {
        "group": CRD_GROUP,
        "scope": "Namespaced",
        "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
        "versions": [{
            "name": "v1", "served": True, "storage": True,
            "subresources": {"status": {}},
            "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                "spec": {"type": "object", "properties": {
                    "size": {"type": "integer", "minimum": 0, "maximum": 10},
                    "color": {"type": "string", "enum": ["red", "blue"]},
                    "tags": {"type": "array", "items": {"type": "string"}},
                }},
                "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
            }}},
        }],
    },
}


def _session(server: KapiServer) -> requests.Session:
    session = requests.Session()
    session.trust_env = False
    session.verify = str(server.ca_path)
    session.headers["Authorization"] = f"Bearer {server.token}"
    return session


@pytest.fixture(scope="module")
def fuzz_server() -> Iterator[KapiServer]:
    yield from serving({**os.environ, "KAPI_REQUEST_LOG": "0"})


def _group_versions(server: KapiServer, session: requests.Session) -> list[tuple[str, str]]:
    """Create the namespace and the CRD (again: a previous run may have deleted
    them) and return the index's ``(group-version, URL)``, in fuzzing order."""
    session.post(server.url + "/api/v1/namespaces", json={"metadata": {"name": NAMESPACE}},
                 timeout=30)
    session.post(server.url + "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
                 json=CRD, timeout=30)
    deadline = time.monotonic() + 60
    while True:
        index = session.get(server.url + "/openapi/v3", timeout=30).json()["paths"]
        if f"apis/{CRD_GROUP}/v1" in index:
            break
        assert time.monotonic() < deadline, f"the CRD is not in /openapi/v3: {list(index)}"
        # A CRD the previous run deleted may still have been terminating (409
        # above): once it is gone, create it again.
        session.post(server.url + "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
                     json=CRD, timeout=30)
        time.sleep(0.3)

    def order(gv: str) -> int:
        if CRD_GROUP in gv:
            return 0
        if "sync.kapi.dev" in gv:
            return 1
        if gv == "api/v1":
            return 2  # the built-in shapes are fuzzed on the core group where it has them
        return 4 if "apiextensions.k8s.io" in gv else 3

    return [(gv, index[gv]["serverRelativeURL"]) for gv in sorted(index, key=order)]


def _fuzz(server: KapiServer, mode: GenerationMode) -> tuple[Counter, list, set, set]:
    session = _session(server)
    calls: Counter = Counter()
    failures: list = []
    read: set = set()
    shapes: set = set()
    for gv, url in _group_versions(server, session):
        response = session.get(server.url + url, timeout=60)
        assert response.status_code == 200, (gv, response.status_code, response.text[:300])
        schema = schemathesis.openapi.from_dict(response.json())
        for result in schema.get_all_operations():
            operation = result.ok()
            read.add(gv)
            shape = _shape(gv, operation)
            if shape in shapes:
                continue
            shapes.add(shape)
            params = {"namespace": NAMESPACE} if "{namespace}" in operation.path else None

            @given(operation.as_strategy(mode, path_parameters=params))
            @settings(max_examples=CASES, derandomize=True, deadline=None, database=None,
                      suppress_health_check=list(HealthCheck))
            def run(case) -> None:
                calls[gv] += 1  # noqa: B023 - run() is called right below, in this iteration
                answer = case.call(base_url=server.url, session=session, timeout=30,
                                   verify=str(server.ca_path))
                if answer.status_code >= 500:
                    failures.append((mode.value, case.method, case.formatted_path,
                                     case.query, repr(case.body)[:300],
                                     answer.status_code, answer.text[:300]))

            run()
    return calls, failures, read, shapes


def _shape(gv: str, operation) -> tuple:
    """What the fuzzer can vary in an operation and which code answers it: the
    handler family (built-in kinds, ``sync.kapi.dev``'s, custom resources),
    the method, the parameters and request body, the scope (namespaced or
    cluster), and the subresource or watch path. Operations of the same shape
    are the same generic handler on another resource's path: every built-in
    group-version's list, read, delete and watch take the same query
    parameters. One of them stands for all: about 45 shapes instead of 548
    operations (or 150-odd when counted per group-version)."""
    raw = operation.definition.raw
    parts = operation.path.strip("/").split("/")
    subresource = next((parts[i + 1] for i, part in enumerate(parts[:-1]) if part == "{name}"),
                       None)
    family = ("custom" if CRD_GROUP in gv else "sync" if "sync.kapi.dev" in gv else "built-in")
    return (
        family,
        operation.method,
        json.dumps(raw.get("parameters") or [], sort_keys=True),
        json.dumps(raw.get("requestBody"), sort_keys=True),
        "namespaced" if "{namespace}" in parts else "cluster",
        "watch" if "watch" in parts else subresource,
    )


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE],
                         ids=lambda m: m.value)
def test_no_server_errors(fuzz_server: KapiServer, mode: GenerationMode) -> None:
    calls, failures, read, shapes = _fuzz(fuzz_server, mode)
    assert len(read) >= 20, read  # every group-version's document was read
    # The custom resources', the syncs' and the core group's handlers were fuzzed.
    assert {f"apis/{CRD_GROUP}/v1", "apis/sync.kapi.dev/v1", "api/v1"} <= set(calls), calls
    # Every shape ran (schemathesis may stop before the budget only when an
    # operation has fewer distinct cases than that).
    assert len(shapes) >= 35, len(shapes)
    assert sum(calls.values()) >= 0.75 * len(shapes) * CASES, (len(shapes), calls)
    tracebacks = [line for line in fuzz_server.output().splitlines() if "Traceback" in line
                  or '"exc":' in line]
    print("FIGURE", {"test": f"schemathesis-{mode.value}", "group_versions": len(read),
                     "shapes": len(shapes), "cases": sum(calls.values()), "server_errors": len(failures),
                     "tracebacks": len(tracebacks)})
    assert not failures, failures
    assert not tracebacks, tracebacks[:5]
