"""Hostile requests to the running server (hypothesis, fixed seed and budget):
random bodies under every body media type, to create, replace and patch, must
never get a 5xx. Findings are kept as ``@example`` cases."""

from __future__ import annotations

import os

import requests
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from kapi_testserver import KapiServer

from tests.fuzz.test_engines import json_values

CASES = int(os.environ.get("KAPI_FUZZ_HTTP_CASES", "150"))
TYPES = [
    "application/json",
    "application/yaml",
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
    "application/apply-patch+yaml",
    "application/vnd.kubernetes.protobuf",
    "text/plain",
]
TARGETS = [
    ("POST", "/api/v1/namespaces/default/configmaps"),
    ("PUT", "/api/v1/namespaces/default/configmaps/fuzz"),
    ("PATCH", "/api/v1/namespaces/default/configmaps/fuzz"),
    ("PATCH", "/api/v1/namespaces/default/configmaps/fuzz?fieldManager=f&force=true"),
    ("POST", "/apis/apps/v1/namespaces/default/deployments?dryRun=All"),
    ("PATCH", "/apis/apps/v1/namespaces/default/deployments/fuzz?fieldManager=f"),
]
_session = requests.Session()
_session.trust_env = False


def _bodies():
    import json

    return (
        json_values.map(lambda v: json.dumps(v).encode())
        | st.fixed_dictionaries(
            {"apiVersion": st.sampled_from(["v1", "apps/v1", "x"]),
             "kind": st.sampled_from(["ConfigMap", "Deployment", "Pod"]),
             "metadata": st.fixed_dictionaries({"name": st.just("fuzz")},
                                               optional={"labels": json_values}),
             },
            optional={"data": json_values, "spec": json_values},
        ).map(lambda v: json.dumps(v).encode())
        | st.binary(max_size=100)
    )


@settings(max_examples=CASES, derandomize=True, deadline=None, database=None,
          suppress_health_check=list(HealthCheck))
@given(st.sampled_from(TARGETS), st.sampled_from(TYPES), _bodies())
@example(("POST", "/api/v1/namespaces/default/configmaps"), "application/yaml",
         b"? [a]\n: 1")
@example(("POST", "/api/v1/namespaces/default/configmaps"), "application/yaml", b"\x80")
@example(("PATCH", "/api/v1/namespaces/default/configmaps/fuzz"),
         "application/apply-patch+yaml", b"\x00")
def test_no_server_errors(kapi_server: KapiServer, target, content_type, body) -> None:
    method, path = target
    response = _session.request(
        method, kapi_server.url + path, data=body, timeout=30,
        headers={"Authorization": f"Bearer {kapi_server.token}",
                 "Content-Type": content_type},
        verify=str(kapi_server.ca_path),
    )
    assert response.status_code < 500, (response.status_code, response.text[:300])
