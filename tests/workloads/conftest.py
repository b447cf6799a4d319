"""Fixtures for the workload controllers: raw HTTP, the Python client, a fresh
namespace, waiting, and small object builders."""

from __future__ import annotations

from tests.lifecycle.conftest import api, namespace, wait_for

__all__ = ["api", "container", "namespace", "pod_template", "wait_for"]


def container(image: str = "nginx:1.25") -> dict:
    return {"name": "c", "image": image}


def pod_template(labels: dict, image: str = "nginx:1.25") -> dict:
    return {"metadata": {"labels": labels}, "spec": {"containers": [container(image)]}}
