"""Schema validation of built-in kinds against the published definitions, without a
server: kube's field paths and reasons, and the cost per Deployment."""

from __future__ import annotations

import copy

import pytest

from kapi.errors import StatusError
from kapi.kinds.builtin import BUILTIN_TYPES

DEPLOYMENT = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "web", "namespace": "shop", "labels": {"app": "web"}},
    "spec": {
        "replicas": 3,
        "selector": {"matchLabels": {"app": "web"}},
        "template": {
            "metadata": {"labels": {"app": "web"}},
            "spec": {
                "containers": [
                    {
                        "name": "web",
                        "image": "nginx:1.27",
                        "ports": [{"containerPort": 80, "name": "http"}],
                        "resources": {"limits": {"cpu": "500m", "memory": "128Mi"}},
                        "env": [{"name": "A", "value": "b"}],
                        "readinessProbe": {"httpGet": {"path": "/", "port": "http"}},
                    }
                ]
            },
        },
    },
}


def _strategy(kind: str):
    return next(
        rt.strategy for rt in BUILTIN_TYPES if rt.kind == kind and rt.group == "apps"
    )


def _causes(obj):
    return {(c.field, c.type) for c in _strategy("Deployment").validate(obj)}


def test_valid_deployment_has_no_causes():
    assert _causes(DEPLOYMENT) == set()


def test_wrong_json_type_is_a_decode_error():
    """A string where an int32 belongs fails as kube's decoder fails: 400
    BadRequest naming the Go struct field and type, before any validation."""
    obj = copy.deepcopy(DEPLOYMENT)
    obj["spec"]["replicas"] = "three"
    obj["spec"]["template"]["spec"]["containers"][0]["imagePullPolicy"] = "Sometimes"
    with pytest.raises(StatusError) as raised:
        _strategy("Deployment").validate(obj)
    assert (raised.value.code, raised.value.reason) == (400, "BadRequest")
    assert raised.value.status["message"] == (
        'Deployment in version "v1" cannot be handled as a Deployment: json: cannot '
        "unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32"
    )


def test_type_enum_quantity_and_int_or_string():
    """Bad quantities, bad enum values and a wrong int-or-string get kube's paths
    and reasons."""
    obj = copy.deepcopy(DEPLOYMENT)
    container = obj["spec"]["template"]["spec"]["containers"][0]
    container["resources"]["limits"]["memory"] = "lots"
    container["imagePullPolicy"] = "Sometimes"
    container["readinessProbe"]["httpGet"]["port"] = True
    causes = _causes(obj)
    assert (
        "spec.template.spec.containers[0].resources.limits[memory]",
        "FieldValueInvalid",
    ) in causes
    assert (
        "spec.template.spec.containers[0].imagePullPolicy",
        "FieldValueNotSupported",
    ) in causes
    assert (
        "spec.template.spec.containers[0].readinessProbe.httpGet.port",
        "FieldValueTypeInvalid",
    ) in causes


def test_required_fields():
    obj = copy.deepcopy(DEPLOYMENT)
    del obj["spec"]["selector"]
    del obj["spec"]["template"]["spec"]["containers"][0]["name"]
    causes = _causes(obj)
    assert ("spec.selector", "FieldValueRequired") in causes
    assert ("spec.template.spec.containers[0].name", "FieldValueRequired") in causes


def test_selector_must_match_template_labels():
    obj = copy.deepcopy(DEPLOYMENT)
    obj["spec"]["template"]["metadata"]["labels"] = {"app": "other"}
    assert _causes(obj) == {("spec.template.metadata.labels", "FieldValueInvalid")}


def test_unknown_fields_are_pruned_and_reported():
    obj = copy.deepcopy(DEPLOYMENT)
    obj["spec"]["bogus"] = 1
    obj["spec"]["template"]["spec"]["containers"][0]["colour"] = "red"
    unknown = _strategy("Deployment").prune(obj)
    assert sorted(unknown) == ["spec.bogus", "spec.template.spec.containers[0].colour"]
    assert "bogus" not in obj["spec"]
