"""The verbs over raw HTTP: create, get, list, update, delete, and their errors."""

from __future__ import annotations

import base64

from tests.api.conftest import assert_status, own


def cm(name: str, data: dict | None = None, **meta) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, **meta}, "data": data or {"a": "1"}}


def test_create_sets_server_fields(api, namespace):
    """A create returns 201 with uid, creationTimestamp, resourceVersion and generation 1."""
    r = api.post(f"/api/v1/namespaces/{namespace}/configmaps", cm("one"))
    assert r.status_code == 201, r.text
    meta = r.json()["metadata"]
    assert meta["namespace"] == namespace
    assert len(meta["uid"]) == 36
    assert meta["creationTimestamp"].endswith("Z")
    assert int(meta["resourceVersion"]) > 0
    assert meta["generation"] == 1
    got = api.get(f"/api/v1/namespaces/{namespace}/configmaps/one").json()
    assert got["metadata"]["uid"] == meta["uid"]
    assert got["data"] == {"a": "1"}


def test_every_write_takes_a_new_higher_resource_version(api, namespace):
    base = f"/api/v1/namespaces/{namespace}/configmaps"
    first = api.post(base, cm("rv")).json()
    second = api.put(f"{base}/rv", cm("rv", {"a": "2"})).json()
    assert int(second["metadata"]["resourceVersion"]) > int(first["metadata"]["resourceVersion"])


def test_duplicate_name_is_already_exists(api, namespace):
    base = f"/api/v1/namespaces/{namespace}/configmaps"
    assert api.post(base, cm("dup")).status_code == 201
    status = assert_status(api.post(base, cm("dup")), 409, "AlreadyExists")
    assert status["message"] == 'configmaps "dup" already exists'
    assert status["details"] == {"name": "dup", "kind": "configmaps"}


def test_generate_name_adds_random_suffix(api, namespace):
    r = api.post(f"/api/v1/namespaces/{namespace}/configmaps", {"metadata": {"generateName": "gen-"}, "data": {}})
    assert r.status_code == 201, r.text
    name = r.json()["metadata"]["name"]
    assert name.startswith("gen-") and len(name) == len("gen-") + 5


def test_get_missing_is_not_found(api, namespace):
    status = assert_status(api.get(f"/api/v1/namespaces/{namespace}/configmaps/nope"), 404, "NotFound")
    assert status["message"] == 'configmaps "nope" not found'


def test_head_answers_as_get_without_a_body(api, namespace):
    base = f"/api/v1/namespaces/{namespace}/configmaps"
    assert api.post(base, cm("headed")).status_code == 201
    for path in (f"{base}/headed", base, "/version", "/healthz"):
        got, head = api.get(path), api.request("HEAD", path)
        assert (head.status_code, head.content) == (200, b""), path
        assert head.headers["Content-Type"] == got.headers["Content-Type"], path
    assert api.request("HEAD", f"{base}/nope").status_code == 404


def test_create_in_missing_namespace_is_not_found(api):
    status = assert_status(api.post("/api/v1/namespaces/does-not-exist/configmaps", cm("x")), 404, "NotFound")
    assert status["message"] == 'namespaces "does-not-exist" not found'


def test_missing_namespace_answers_before_validation_and_dry_run(api):
    """kube admits the namespace before it validates: an invalid object or a dry
    run in a namespace that does not exist is a 404 for the namespace too."""
    base = "/api/v1/namespaces/does-not-exist/configmaps"
    status = assert_status(api.post(base, cm("Bad_Name")), 404, "NotFound")
    assert status["message"] == 'namespaces "does-not-exist" not found'
    status = assert_status(api.post(base + "?dryRun=All", cm("x")), 404, "NotFound")
    assert status["message"] == 'namespaces "does-not-exist" not found'
    status = assert_status(api.post(base, {"metadata": {"generateName": "g-"}}), 404, "NotFound")
    assert status["details"] == {"name": "does-not-exist", "kind": "namespaces"}


def test_namespace_mismatch_is_bad_request(api, namespace):
    body = cm("x", namespace="other")
    status = assert_status(api.post(f"/api/v1/namespaces/{namespace}/configmaps", body), 400, "BadRequest")
    assert "does not match the namespace" in status["message"]


def test_invalid_name_is_invalid_with_field_path(api, namespace):
    status = assert_status(api.post(f"/api/v1/namespaces/{namespace}/configmaps", cm("Bad_Name")), 422, "Invalid")
    assert status["message"].startswith('ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name"')
    causes = status["details"]["causes"]
    assert causes[0]["field"] == "metadata.name"
    assert causes[0]["reason"] == "FieldValueInvalid"
    assert status["details"]["kind"] == "ConfigMap"


def test_namespace_names_are_dns_labels(api):
    status = assert_status(api.post("/api/v1/namespaces", {"metadata": {"name": "a.b"}}), 422, "Invalid")
    assert status["details"]["causes"][0]["field"] == "metadata.name"


def test_bad_labels_and_annotations_are_invalid(api, namespace):
    body = cm("lab", labels={"bad key!": "v"}, annotations={"ok": "x" * (256 * 1024 + 1)})
    status = assert_status(api.post(f"/api/v1/namespaces/{namespace}/configmaps", body), 422, "Invalid")
    fields = {c["field"] for c in status["details"]["causes"]}
    assert "metadata.labels" in fields
    assert "metadata.annotations" in fields


def test_stale_update_is_conflict(api, namespace):
    base = f"/api/v1/namespaces/{namespace}/configmaps"
    created = api.post(base, cm("c")).json()
    stale = dict(created)
    fresh = api.put(f"{base}/c", {**created, "data": {"a": "2"}})
    assert fresh.status_code == 200, fresh.text
    status = assert_status(api.put(f"{base}/c", {**stale, "data": {"a": "3"}}), 409, "Conflict")
    assert status["message"] == (
        'Operation cannot be fulfilled on configmaps "c": the object has been modified; '
        "please apply your changes to the latest version and try again"
    )
    assert api.get(f"{base}/c").json()["data"] == {"a": "2"}


def test_update_without_resource_version_is_unconditional(api, namespace):
    base = f"/api/v1/namespaces/{namespace}/configmaps"
    api.post(base, cm("u"))
    r = api.put(f"{base}/u", cm("u", {"b": "2"}))
    assert r.status_code == 200, r.text
    assert r.json()["data"] == {"b": "2"}


def test_update_cannot_change_immutable_metadata(api, namespace):
    base = f"/api/v1/namespaces/{namespace}/configmaps"
    created = api.post(base, cm("imm")).json()
    body = {**created, "metadata": {**created["metadata"], "uid": "00000000-0000-0000-0000-000000000000"}}
    status = assert_status(api.put(f"{base}/imm", body), 422, "Invalid")
    assert any(c["field"] == "metadata.uid" for c in status["details"]["causes"])
    renamed = {**created, "metadata": {**created["metadata"], "name": "other"}}
    assert_status(api.put(f"{base}/imm", renamed), 400, "BadRequest")


def test_generation_moves_on_data_not_on_labels(api, namespace):
    base = f"/api/v1/namespaces/{namespace}/configmaps"
    created = api.post(base, cm("g")).json()
    labelled = api.put(f"{base}/g", {**created, "metadata": {**created["metadata"], "labels": {"x": "y"}}}).json()
    assert labelled["metadata"]["generation"] == 1
    changed = api.put(f"{base}/g", {**labelled, "data": {"a": "9"}}).json()
    assert changed["metadata"]["generation"] == 2


def test_unchanged_update_does_not_write(api, namespace):
    base = f"/api/v1/namespaces/{namespace}/configmaps"
    created = api.post(base, cm("same")).json()
    again = api.put(f"{base}/same", created).json()
    assert again["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]


def test_immutable_configmap_refuses_data_changes(api, namespace):
    base = f"/api/v1/namespaces/{namespace}/configmaps"
    created = api.post(base, {**cm("frozen"), "immutable": True}).json()
    status = assert_status(api.put(f"{base}/frozen", {**created, "data": {"a": "2"}}), 422, "Invalid")
    assert any(c["field"] == "data" for c in status["details"]["causes"])
    relabel = {**created, "metadata": {**created["metadata"], "labels": {"l": "v"}}}
    assert api.put(f"{base}/frozen", relabel).status_code == 200


def test_secret_string_data_is_merged_into_base64_data(api, namespace):
    body = {"metadata": {"name": "s"}, "data": {"a": base64.b64encode(b"one").decode()}, "stringData": {"b": "two"}}
    r = api.post(f"/api/v1/namespaces/{namespace}/secrets", body)
    assert r.status_code == 201, r.text
    secret = r.json()
    assert "stringData" not in secret
    assert secret["type"] == "Opaque"
    assert base64.b64decode(secret["data"]["b"]) == b"two"
    assert base64.b64decode(secret["data"]["a"]) == b"one"


def test_secret_with_invalid_base64_is_invalid(api, namespace):
    body = {"metadata": {"name": "bad"}, "data": {"a": "not base64!"}}
    status = assert_status(api.post(f"/api/v1/namespaces/{namespace}/secrets", body), 422, "Invalid")
    assert status["details"]["causes"][0]["field"] == "data[a]"


def test_secret_type_is_immutable(api, namespace):
    base = f"/api/v1/namespaces/{namespace}/secrets"
    created = api.post(base, {"metadata": {"name": "t"}, "type": "Opaque"}).json()
    status = assert_status(api.put(f"{base}/t", {**created, "type": "example.com/other"}), 422, "Invalid")
    assert status["details"]["causes"][0]["field"] == "type"


def test_delete_returns_success_status_and_removes(api, namespace):
    base = f"/api/v1/namespaces/{namespace}/configmaps"
    created = api.post(base, cm("d")).json()
    r = api.delete(f"{base}/d")
    assert r.status_code == 200, r.text
    status = r.json()
    assert status["kind"] == "Status" and status["status"] == "Success"
    assert status["details"]["uid"] == created["metadata"]["uid"]
    assert api.get(f"{base}/d").status_code == 404
    assert_status(api.delete(f"{base}/d"), 404, "NotFound")


def test_delete_collection_honours_label_selector(api, namespace):
    base = f"/api/v1/namespaces/{namespace}/configmaps"
    for i in range(3):
        api.post(base, cm(f"keep-{i}", labels={"role": "keep"}))
        api.post(base, cm(f"drop-{i}", labels={"role": "drop"}))
    r = api.delete(base, params={"labelSelector": "role=drop"})
    assert r.status_code == 200, r.text
    assert sorted(i["metadata"]["name"] for i in r.json()["items"]) == ["drop-0", "drop-1", "drop-2"]
    left = own(api.get(base).json()["items"])
    assert sorted(i["metadata"]["name"] for i in left) == ["keep-0", "keep-1", "keep-2"]


def test_protected_namespaces_cannot_be_deleted(api):
    status = assert_status(api.delete("/api/v1/namespaces/default"), 403, "Forbidden")
    assert "may not be deleted" in status["message"]


def test_cluster_scoped_resource_has_no_namespaced_path(api, namespace):
    assert_status(api.get(f"/api/v1/namespaces/{namespace}/namespaces/x"), 404, "NotFound")


def test_unknown_resource_is_not_found_status(api):
    assert_status(api.get("/api/v1/widgets"), 404, "NotFound")
    assert_status(api.get("/apis/nope.example.com/v1/things"), 404, "NotFound")


def test_verb_not_supported_is_method_not_allowed(api):
    assert_status(api.delete("/api/v1/namespaces"), 405, "MethodNotAllowed")


def test_delete_preconditions(api, namespace):
    base = f"/api/v1/namespaces/{namespace}/configmaps"
    created = api.post(base, cm("pre")).json()
    wrong_uid = {"preconditions": {"uid": "00000000-0000-0000-0000-000000000000"}}
    status = assert_status(api.delete(f"{base}/pre", json=wrong_uid), 409, "Conflict")
    assert "Precondition failed: UID in precondition" in status["message"]
    stale = {"preconditions": {"resourceVersion": "1"}}
    assert_status(api.delete(f"{base}/pre", json=stale), 409, "Conflict")
    right = {"preconditions": {"uid": created["metadata"]["uid"], "resourceVersion": created["metadata"]["resourceVersion"]}}
    assert api.delete(f"{base}/pre", json=right).status_code == 200


def test_dry_run_create_stores_nothing(api, namespace):
    base = f"/api/v1/namespaces/{namespace}/configmaps"
    r = api.post(base, cm("dry"), params={"dryRun": "All"})
    assert r.status_code == 201, r.text
    assert r.json()["metadata"]["name"] == "dry"
    assert api.get(f"{base}/dry").status_code == 404
    assert_status(api.post(base, cm("dry"), params={"dryRun": "Sometimes"}), 422, "Invalid")
