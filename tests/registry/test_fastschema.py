"""The compiled validity check in front of jsonschema (``kapi.registry.fastschema``):
it may only ever say "valid" where jsonschema finds no error, and it does say
so for the ordinary valid objects (else nothing is saved)."""

from __future__ import annotations

import copy
import random

import pytest

from kapi.registry.fastschema import compile_schema
from kapi.registry.schemavalidation import (
    FORMAT_CHECKER,
    openapi_to_jsonschema,
    schema_causes,
    validator_for_definition,
    validator_for_schema,
)

CONFIGMAP = {
    "apiVersion": "v1",
    "kind": "ConfigMap",
    "metadata": {},
    "data": {"a": "x" * 100, "b.conf": "y"},
    "binaryData": {"c": "aGVsbG8="},
    "immutable": False,
}
DEPLOYMENT = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {},
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
                        "ports": [{"containerPort": 80, "name": "http", "protocol": "TCP"}],
                        "resources": {"limits": {"cpu": "500m", "memory": 128}},
                        "env": [{"name": "A", "value": "b"}],
                        "readinessProbe": {"httpGet": {"path": "/", "port": "http"}},
                    }
                ],
                "restartPolicy": "Always",
            },
        },
    },
}
SERVICE = {
    "apiVersion": "v1",
    "kind": "Service",
    "metadata": {},
    "spec": {"type": "ClusterIP", "ports": [{"port": 80, "targetPort": 8080}], "selector": {"app": "web"}},
}
CASES = [
    ("io.k8s.api.core.v1.ConfigMap", CONFIGMAP),
    ("io.k8s.api.apps.v1.Deployment", DEPLOYMENT),
    ("io.k8s.api.core.v1.Service", SERVICE),
]
#: Values that break one rule or another: wrong types, null where oneOf
#: branches both allow it, floats where integers are asked, bad formats.
ODD_VALUES = [None, True, 0, -1, 2**40, 1.5, 3.0, "", "x", "not a quantity!", "RollingUpdate",
              "Sideways", [], ["a"], {}, {"z": 1}, {"z": "w"}]


def _paths(value, path=()):
    yield path
    if isinstance(value, dict):
        for key, child in value.items():
            yield from _paths(child, (*path, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield from _paths(child, (*path, index))


def _set(obj, path, value):
    target = obj
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = value


@pytest.mark.parametrize(("definition", "valid"), CASES)
def test_valid_objects_take_the_compiled_check(definition, valid):
    validator = validator_for_definition(definition)
    assert not list(validator.iter_errors(valid))
    assert compile_schema(validator.schema, FORMAT_CHECKER)(valid) is True


@pytest.mark.parametrize(("definition", "valid"), CASES)
def test_the_check_never_passes_what_jsonschema_refuses(definition, valid):
    validator = validator_for_definition(definition)
    check = compile_schema(validator.schema, FORMAT_CHECKER)
    rng = random.Random(15)
    paths = [p for p in _paths(valid) if p]
    refused = 0
    for path in paths:
        for value in ODD_VALUES:
            mutated = copy.deepcopy(valid)
            _set(mutated, path, value)
            if path[-1] != "metadata" and rng.random() < 0.3:
                # ... and an unknown field next to it.
                parent = mutated
                for step in path[:-1]:
                    parent = parent[step]
                if isinstance(parent, dict):
                    parent["unknownField"] = value
            errors = list(validator.iter_errors(mutated))
            if errors:
                refused += 1
                assert check(mutated) is False, (path, value)
                # The causes are jsonschema's, as without the check.
                assert schema_causes(validator, mutated)
            else:
                assert check(mutated) in (True, False)
    assert refused > len(paths)  # the mutations did break rules


def test_crd_schemas_with_unmodelled_keywords_fall_back():
    schema = {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "properties": {
                    "size": {"type": "integer", "minimum": 1, "maximum": 5},
                    "mode": {"type": "string", "enum": ["a", "b"]},
                    "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 2, "uniqueItems": True},
                    "port": {"x-kubernetes-int-or-string": True, "anyOf": [{"type": "integer"}, {"type": "string"}]},
                },
                "required": ["size"],
            }
        },
    }
    validator = validator_for_schema(schema)
    check = compile_schema(openapi_to_jsonschema(schema), FORMAT_CHECKER)
    good = {"spec": {"size": 2, "mode": "a", "port": 80}}
    assert check(good) is True and not list(validator.iter_errors(good))
    assert check({"spec": {"size": 9}}) is False
    assert check({"spec": {"mode": "a"}}) is False
    assert check({"spec": {"size": 1, "mode": "c"}}) is False
    # uniqueItems is not modelled: never "certainly valid", jsonschema decides.
    assert check({"spec": {"size": 1, "tags": ["x"]}}) is False
    assert schema_causes(validator, {"spec": {"size": 1, "tags": ["x", "x"]}})
    assert not schema_causes(validator, {"spec": {"size": 1, "tags": ["x"]}})
