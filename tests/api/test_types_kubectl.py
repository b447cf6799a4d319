"""kubectl against every-kind kapi: a realistic multi-document application applied
twice, get of each kind, api-resources, explain, scale on a custom resource,
invalid manifests rejected with kube's field paths."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

MANIFESTS = Path(__file__).parent / "manifests"
APP = [str(MANIFESTS / "app.yaml"), str(MANIFESTS / "workload.yaml")]


def _apply(server, *extra: str):
    args = ["apply"]
    for path in APP:
        args += ["-f", path]
    return server.kubectl(*args, *extra, check=False)


@pytest.fixture(scope="module")
def applied(kapi_server):
    """The application applied client-side, CRD and custom resources in one file set.

    As against a real cluster, kubectl's first pass may not map the Widgets (it read
    discovery before the CRD existed: "ensure CRDs are installed first"); the
    second pass creates them."""
    first = _apply(kapi_server)
    if first.returncode != 0:
        errors = [
            line
            for line in first.stderr.splitlines()
            if line.startswith(("error", "Error"))
        ]
        assert "ensure CRDs are installed first" in first.stderr and not errors, (
            first.stderr
        )
    second = _apply(kapi_server)
    assert second.returncode == 0, second.stderr
    assert "widget.example.com/small-one created" in first.stdout + second.stdout
    yield kapi_server
    kapi_server.kubectl(
        "delete", "-f", APP[1], "--ignore-not-found", "--wait=false", check=False
    )


def test_apply_twice_is_unchanged(applied):
    """Applying the same files again changes nothing."""
    second = _apply(applied)
    assert second.returncode == 0, second.stderr
    lines = [line for line in second.stdout.splitlines() if line]
    assert lines and all(line.endswith("unchanged") for line in lines), second.stdout


def test_apply_server_side(applied):
    """Server-side apply of the same files, twice (takes over from client-side apply)."""
    result = _apply(applied, "--server-side")
    if result.returncode == 0:
        result = _apply(applied, "--server-side")
    if (
        "not supported" in result.stderr
        or "405" in result.stderr
        or "415" in result.stderr
    ):
        pytest.skip(
            "server-side apply (PATCH application/apply-patch+yaml) not available yet"
        )
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize(
    ("resource", "columns"),
    [
        ("deployments", ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"]),
        ("services", ["NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE"]),
        ("ingresses", ["NAME", "CLASS", "HOSTS", "ADDRESS", "PORTS", "AGE"]),
        (
            "hpa",
            ["NAME", "REFERENCE", "TARGETS", "MINPODS", "MAXPODS", "REPLICAS", "AGE"],
        ),
        ("roles", ["NAME", "CREATED", "AT"]),
        ("rolebindings", ["NAME", "ROLE", "AGE"]),
        ("configmaps", ["NAME", "DATA", "AGE"]),
        ("secrets", ["NAME", "TYPE", "DATA", "AGE"]),
        ("serviceaccounts", ["NAME", "SECRETS", "AGE"]),
        ("widgets", ["NAME", "SIZE", "REPLICAS", "AGE"]),
    ],
)
def test_get_prints_kube_columns(applied, resource, columns):
    out = applied.kubectl("get", resource, "-n", "shop").stdout
    assert out.splitlines()[0].split() == columns, out


def test_get_service_and_deployment_values(applied):
    out = applied.kubectl("get", "deploy,svc", "-n", "shop", "--no-headers").stdout
    assert "0/3" in out
    assert "80/TCP" in out and "ClusterIP" in out


def test_get_all_includes_custom_resources(applied):
    out = applied.kubectl("get", "all", "-n", "shop").stdout
    assert "deployment.apps/web" in out and "service/web" in out
    assert "widget.example.com/small-one" in out


def test_api_resources(applied):
    out = applied.kubectl("api-resources").stdout
    for expected in (
        "deployments",
        "ingresses",
        "horizontalpodautoscalers",
        "customresourcedefinitions",
        "widgets",
    ):
        assert expected in out
    # Served by kapi.handlers.reviews now that they work (issue 9).
    assert "tokenreviews" in out and "subjectaccessreviews" in out
    widgets = next(line for line in out.splitlines() if line.startswith("widgets "))
    assert widgets.split() == ["widgets", "wd", "example.com/v1", "true", "Widget"]


def test_explain_builtin_and_custom(applied):
    out = applied.kubectl("explain", "deployment.spec.template").stdout
    assert "PodTemplateSpec" in out and "FIELDS:" in out
    out = applied.kubectl("explain", "widgets.spec").stdout
    assert "WidgetSpec is the desired state" in out and "size" in out


def test_scale_custom_resource(applied):
    applied.kubectl("scale", "widget", "big-one", "-n", "shop", "--replicas=4")
    out = applied.kubectl(
        "get", "widget", "big-one", "-n", "shop", "-o", "jsonpath={.spec.replicas}"
    ).stdout
    assert out == "4"


def test_scale_deployment(applied):
    applied.kubectl("scale", "deployment", "web", "-n", "shop", "--replicas=5")
    out = applied.kubectl(
        "get", "deployment", "web", "-n", "shop", "-o", "jsonpath={.spec.replicas}"
    ).stdout
    assert out == "5"


INVALID = {
    "deployment-duplicate-volume": (
        """
        apiVersion: apps/v1
        kind: Deployment
        metadata: {name: bad, namespace: shop}
        spec:
          selector: {matchLabels: {app: a}}
          template:
            metadata: {labels: {app: a}}
            spec:
              volumes: [{name: data, emptyDir: {}}, {name: data, emptyDir: {}}]
              containers: [{name: c, image: nginx}]
        """,
        'spec.template.spec.volumes[1].name: Duplicate value: "data"',
    ),
    "deployment-mount-unknown-volume": (
        """
        apiVersion: apps/v1
        kind: Deployment
        metadata: {name: bad, namespace: shop}
        spec:
          selector: {matchLabels: {app: a}}
          template:
            metadata: {labels: {app: a}}
            spec:
              volumes: [{name: data, emptyDir: {}}]
              containers:
              - name: c
                image: nginx
                volumeMounts: [{name: data, mountPath: /d}, {name: cache, mountPath: /d}]
        """,
        'spec.template.spec.containers[0].volumeMounts[1].name: Not found: "cache"',
    ),
    "deployment-duplicate-port-name": (
        """
        apiVersion: apps/v1
        kind: Deployment
        metadata: {name: bad, namespace: shop}
        spec:
          selector: {matchLabels: {app: a}}
          template:
            metadata: {labels: {app: a}}
            spec:
              containers:
              - name: c
                image: nginx
                ports: [{name: http, containerPort: 80}, {name: http, containerPort: 81}]
        """,
        'spec.template.spec.containers[0].ports[1].name: Duplicate value: "http"',
    ),
    "deployment-selector": (
        """
        apiVersion: apps/v1
        kind: Deployment
        metadata: {name: bad, namespace: shop}
        spec:
          selector: {matchLabels: {app: a}}
          template:
            metadata: {labels: {app: b}}
            spec: {containers: [{name: c, image: nginx}]}
        """,
        "spec.template.metadata.labels",
    ),
    "service-port": (
        """
        apiVersion: v1
        kind: Service
        metadata: {name: bad, namespace: shop}
        spec: {ports: [{port: 70000}]}
        """,
        "spec.ports[0].port",
    ),
    "ingress-pathtype": (
        """
        apiVersion: networking.k8s.io/v1
        kind: Ingress
        metadata: {name: bad, namespace: shop}
        spec:
          rules:
          - http:
              paths:
              - path: /
                backend: {service: {name: web, port: {number: 80}}}
        """,
        "spec.rules[0].http.paths[0].pathType",
    ),
    "container-quantity": (
        """
        apiVersion: v1
        kind: Pod
        metadata: {name: bad, namespace: shop}
        spec:
          containers:
          - name: c
            image: nginx
            resources: {limits: {memory: lots}}
        """,
        "spec.containers[0].resources.limits[memory]",
    ),
    "rolebinding-roleref": (
        """
        apiVersion: rbac.authorization.k8s.io/v1
        kind: RoleBinding
        metadata: {name: bad, namespace: shop}
        roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Secret, name: x}
        """,
        "roleRef.kind",
    ),
    "hpa-max": (
        """
        apiVersion: autoscaling/v2
        kind: HorizontalPodAutoscaler
        metadata: {name: bad, namespace: shop}
        spec: {scaleTargetRef: {kind: Deployment, name: web}, minReplicas: 5, maxReplicas: 2}
        """,
        "spec.maxReplicas",
    ),
    "job-restart-policy": (
        """
        apiVersion: batch/v1
        kind: Job
        metadata: {name: bad, namespace: shop}
        spec: {template: {spec: {containers: [{name: c, image: busybox}]}}}
        """,
        "spec.template.spec.restartPolicy",
    ),
    "widget-enum": (
        """
        apiVersion: example.com/v1
        kind: Widget
        metadata: {name: bad, namespace: shop}
        spec: {size: gigantic}
        """,
        "spec.size",
    ),
    "widget-cel": (
        """
        apiVersion: example.com/v1
        kind: Widget
        metadata: {name: bad, namespace: shop}
        spec: {size: small, replicas: 20, maxReplicas: 3}
        """,
        "replicas must not exceed maxReplicas",
    ),
}


@pytest.mark.parametrize("case", sorted(INVALID))
def test_invalid_manifest_is_rejected_with_field_path(applied, case):
    manifest, expected = INVALID[case]
    result = applied.kubectl(
        "create", "-f", "-", input=textwrap.dedent(manifest), check=False
    )
    assert result.returncode != 0
    assert "is invalid" in result.stderr and expected in result.stderr, result.stderr


def test_wrong_json_type_is_refused_as_kube_decodes(applied):
    """A string where an integer belongs fails kube's decoding: BadRequest naming
    the Go struct field, as a real cluster says it (tests/api/test_request_errors_http.py)."""
    manifest = """
    apiVersion: apps/v1
    kind: Deployment
    metadata: {name: bad, namespace: shop}
    spec:
      replicas: many
      selector: {matchLabels: {app: a}}
      template:
        metadata: {labels: {app: a}}
        spec: {containers: [{name: c, image: nginx}]}
    """
    result = applied.kubectl(
        "create", "-f", "-", input=textwrap.dedent(manifest), check=False
    )
    assert result.returncode != 0
    assert "Error from server (BadRequest)" in result.stderr, result.stderr
    assert (
        'Deployment in version "v1" cannot be handled as a Deployment: json: cannot '
        "unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32"
    ) in result.stderr


def test_unknown_field_is_refused_by_kubectl_validation(applied):
    manifest = """
    apiVersion: v1
    kind: ConfigMap
    metadata: {name: strict, namespace: shop}
    data: {a: b}
    bogus: 1
    """
    result = applied.kubectl(
        "create", "-f", "-", input=textwrap.dedent(manifest), check=False
    )
    assert result.returncode != 0
    assert 'unknown field "bogus"' in result.stderr


def test_explain_with_an_empty_cache(applied, tmp_path):
    """kubectl with an empty cache fetches discovery and OpenAPI v3 for explain
    (bench/kinds.py times this)."""
    explained = applied.kubectl(
        "explain", "deployment.spec", "--cache-dir", str(tmp_path / "cache")
    )
    assert "KIND:       Deployment" in explained.stdout
    assert "template\t<PodTemplateSpec> -required-" in explained.stdout
