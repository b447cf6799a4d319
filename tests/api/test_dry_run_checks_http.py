"""Dry-run runs every check of the real request but the final write.

kube's dry-run goes through the same registry code and stops before storage: a
dry-run create of an object that exists is 409 AlreadyExists, as the real create
would be, so ``kubectl apply --dry-run=server`` and admission tests tell the
truth. Each case here is answered the same with and without ``dryRun=All``, and
the dry run leaves the object as it was.
"""

from __future__ import annotations

from tests.api.conftest import assert_status, own


def _cm(name: str, **data: str) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data or {"a": "1"}}


def test_dry_run_create_of_existing_object_is_already_exists(api, namespace):
    """409 AlreadyExists, with kube's message, and the stored object untouched."""
    base = f"/api/v1/namespaces/{namespace}/configmaps"
    created = api.post(base, _cm("there"))
    assert created.status_code == 201, created.text
    for params in ({"dryRun": "All"}, {}):
        status = assert_status(api.post(base, _cm("there", b="2"), params=params), 409, "AlreadyExists")
        assert status["message"] == 'configmaps "there" already exists'
        assert status["details"] == {"name": "there", "kind": "configmaps"}
    assert api.get(f"{base}/there").json() == created.json()


def test_dry_run_create_with_generate_name_still_answers(api, namespace):
    """A generated name is new by construction: the dry run answers 201."""
    base = f"/api/v1/namespaces/{namespace}/configmaps"
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"generateName": "g-"}}
    response = api.post(base, body, params={"dryRun": "All"})
    assert response.status_code == 201, response.text
    assert response.json()["metadata"]["name"].startswith("g-")
    assert own(api.get(base).json()["items"]) == []


def test_dry_run_update_checks_the_resource_version(api, namespace):
    """A stale resourceVersion is 409 Conflict with or without dry-run."""
    base = f"/api/v1/namespaces/{namespace}/configmaps"
    created = api.post(base, _cm("cas")).json()
    stale = {**_cm("cas", a="2"), "metadata": {"name": "cas", "resourceVersion": "1"}}
    for params in ({"dryRun": "All"}, {}):
        assert_status(api.put(f"{base}/cas", stale, params=params), 409, "Conflict")
    assert api.get(f"{base}/cas").json() == created


def test_kubectl_create_dry_run_server_of_existing_object(kapi_server, namespace, tmp_path):
    """``kubectl create --dry-run=server`` of an existing object fails as the real
    create does."""
    manifest = tmp_path / "cm.yaml"
    manifest.write_text(f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: k, namespace: {namespace}}}\n")
    kapi_server.kubectl("create", "-f", str(manifest))
    result = kapi_server.kubectl("create", "--dry-run=server", "-f", str(manifest), check=False)
    assert result.returncode != 0
    assert 'configmaps "k" already exists' in result.stderr
