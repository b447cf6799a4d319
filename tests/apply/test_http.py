"""Raw HTTP: every PATCH, apply, managedFields, dry-run and fieldValidation rule."""

from __future__ import annotations

import pytest

from tests.apply.conftest import configmap

JSON_PATCH = "application/json-patch+json"
MERGE = "application/merge-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"


def _entries(obj):
    return {
        (e["manager"], e["operation"]): e
        for e in obj["metadata"].get("managedFields", [])
    }


# -- patch types -------------------------------------------------------------------
def test_unknown_content_type_is_415(api, name):
    api.create_cm(name)
    r = api.request("PATCH", api.cm_path(name), {"data": {}}, content_type="text/plain")
    assert r.status_code == 415 and r.json()["reason"] == "UnsupportedMediaType"
    r = api.request(
        "PATCH", api.cm_path(name), {"data": {}}, content_type="application/json"
    )
    assert r.status_code == 415
    assert "application/merge-patch+json" in r.json()["message"]


def test_json_patch_applies_and_failed_test_writes_nothing(api, name):
    created = api.create_cm(name, {"a": "1"})
    ops = [
        {"op": "add", "path": "/data/b", "value": "2"},
        {"op": "test", "path": "/data/a", "value": "1"},
    ]
    r = api.request("PATCH", api.cm_path(name), ops, content_type=JSON_PATCH)
    assert r.status_code == 200, r.text
    assert r.json()["data"] == {"a": "1", "b": "2"}
    rv = r.json()["metadata"]["resourceVersion"]
    assert rv != created["metadata"]["resourceVersion"]
    bad = [
        {"op": "add", "path": "/data/c", "value": "3"},
        {"op": "test", "path": "/data/a", "value": "x"},
    ]
    r = api.request("PATCH", api.cm_path(name), bad, content_type=JSON_PATCH)
    assert r.status_code == 422 and r.json()["reason"] == "Invalid"
    r = api.request(
        "PATCH",
        api.cm_path(name),
        [{"op": "remove", "path": "/data/zz"}],
        content_type=JSON_PATCH,
    )
    assert r.status_code == 422
    live = api.request("GET", api.cm_path(name)).json()
    assert (
        live["data"] == {"a": "1", "b": "2"}
        and live["metadata"]["resourceVersion"] == rv
    )


def test_malformed_patches_are_400(api, name):
    api.create_cm(name)
    r = api.request("PATCH", api.cm_path(name), b"{not json", content_type=MERGE)
    assert r.status_code == 400 and r.json()["reason"] == "BadRequest"
    r = api.request("PATCH", api.cm_path(name), {"op": "add"}, content_type=JSON_PATCH)
    assert r.status_code == 400


def test_merge_patch_null_deletes(api, name):
    api.create_cm(name, {"a": "1", "b": "2"})
    r = api.request(
        "PATCH", api.cm_path(name), {"data": {"a": None, "c": "3"}}, content_type=MERGE
    )
    assert r.status_code == 200 and r.json()["data"] == {"b": "2", "c": "3"}


def test_strategic_merge_patch_directives(api, name):
    api.create_cm(name, {"a": "1", "b": "2"})
    body = {
        "metadata": {"finalizers": ["example.com/x"]},
        "data": {"$retainKeys": ["a"], "a": "9"},
    }
    r = api.request("PATCH", api.cm_path(name), body, content_type=STRATEGIC)
    assert r.status_code == 200, r.text
    assert r.json()["data"] == {"a": "9"}
    body = {"metadata": {"$deleteFromPrimitiveList/finalizers": ["example.com/x"]}}
    r = api.request("PATCH", api.cm_path(name), body, content_type=STRATEGIC)
    assert r.status_code == 200 and not r.json()["metadata"].get("finalizers")


def test_patch_missing_object_is_404(api, name):
    r = api.request("PATCH", api.cm_path(name), {"data": {}}, content_type=MERGE)
    assert r.status_code == 404


def test_patch_with_stale_resource_version_conflicts(api, name):
    api.create_cm(name)
    r = api.request(
        "PATCH",
        api.cm_path(name),
        {"metadata": {"resourceVersion": "1"}},
        content_type=MERGE,
    )
    assert r.status_code == 409


def test_force_only_for_apply(api, name):
    api.create_cm(name)
    r = api.request(
        "PATCH", api.cm_path(name), {}, content_type=MERGE, params={"force": "true"}
    )
    assert r.status_code == 422
    assert (
        r.json()["message"]
        == 'PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not be specified for non-apply patch'
    )


# -- server-side apply -----------------------------------------------------------------
def test_apply_creates_then_unchanged_apply_does_not_write(api, name):
    r = api.apply(name, configmap(name, {"a": "1"}))
    assert r.status_code == 201, r.text
    created = r.json()
    assert _entries(created)[("test", "Apply")]["fieldsV1"] == {"f:data": {"f:a": {}}}
    again = api.apply(name, configmap(name, {"a": "1"}))
    assert again.status_code == 200
    assert again.json() == created


def test_apply_accepts_yaml(api, name):
    body = (
        f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata:\n  k: v\n"
    )
    r = api.apply(name, body)
    assert r.status_code == 201 and r.json()["data"] == {"k": "v"}


def test_apply_requires_field_manager(api, name):
    r = api.apply(name, configmap(name, {"a": "1"}), manager="")
    assert r.status_code == 422
    assert r.json()["message"] == (
        'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch'
    )


def test_apply_conflict_status(api, name):
    api.apply(name, configmap(name, {"a": "1", "b": "1"}), manager="one")
    r = api.apply(name, configmap(name, {"a": "2", "b": "2"}), manager="two")
    assert r.status_code == 409
    status = r.json()
    assert status["reason"] == "Conflict"
    assert status["message"] == (
        'Apply failed with 2 conflicts: conflicts with "one":\n- .data.a\n- .data.b'
    )
    assert status["details"]["causes"] == [
        {
            "reason": "FieldManagerConflict",
            "message": 'conflict with "one"',
            "field": ".data.a",
        },
        {
            "reason": "FieldManagerConflict",
            "message": 'conflict with "one"',
            "field": ".data.b",
        },
    ]


def test_apply_conflict_with_updater_names_api_version(api, name):
    api.create_cm(name, {"a": "1"}, fieldManager="editor")
    r = api.apply(name, configmap(name, {"a": "2"}), manager="applier")
    assert r.status_code == 409
    assert (
        r.json()["message"]
        == 'Apply failed with 1 conflict: conflict with "editor" using v1: .data.a'
    )


def test_force_takes_ownership_and_dropped_fields_are_removed(api, name):
    api.apply(name, configmap(name, {"a": "1", "b": "1"}), manager="one")
    r = api.apply(name, configmap(name, {"a": "2"}), manager="two", force="true")
    assert r.status_code == 200 and r.json()["data"] == {"a": "2", "b": "1"}
    # "one" drops b (it owns it alone) and a (now owned by "two").
    r = api.apply(
        name,
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}},
        manager="one",
    )
    assert r.json()["data"] == {"a": "2"}
    assert set(_entries(r.json())) == {("two", "Apply")}


def test_shared_ownership_on_equal_values(api, name):
    api.apply(name, configmap(name, {"a": "1"}), manager="one")
    r = api.apply(name, configmap(name, {"a": "1"}), manager="two")
    assert r.status_code == 200
    entries = _entries(r.json())
    assert (
        entries[("one", "Apply")]["fieldsV1"] == entries[("two", "Apply")]["fieldsV1"]
    )
    # "one" leaves: the value stays, "two" still owns it.
    r = api.apply(
        name,
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}},
        manager="one",
    )
    assert r.json()["data"] == {"a": "1"}


def test_apply_name_mismatch_is_400(api, name):
    r = api.apply(name, configmap("other", {"a": "1"}))
    assert r.status_code == 400


def test_apply_with_managed_fields_is_400(api, name):
    body = configmap(
        name, {"a": "1"}, managedFields=[{"manager": "x", "operation": "Apply"}]
    )
    assert api.apply(name, body).status_code == 400


# -- managedFields on every write ----------------------------------------------------
def test_manager_from_user_agent(api, name):
    r = api.request(
        "POST",
        api.cm_path(),
        configmap(name, {"a": "1"}),
        headers={"User-Agent": "mytool/1.2 (linux)"},
    )
    assert r.status_code == 201
    entry = r.json()["metadata"]["managedFields"][0]
    assert entry["manager"] == "mytool" and entry["operation"] == "Update"
    assert entry["fieldsV1"] == {"f:data": {".": {}, "f:a": {}}}
    assert (
        entry["apiVersion"] == "v1"
        and entry["fieldsType"] == "FieldsV1"
        and entry["time"]
    )


def test_put_records_update_and_keeps_entries(api, name):
    created = api.create_cm(name, {"a": "1"}, fieldManager="creator")
    body = {**created, "data": {"a": "1", "b": "2"}}
    body["metadata"].pop("managedFields")
    r = api.request("PUT", api.cm_path(name), body, params={"fieldManager": "putter"})
    assert r.status_code == 200
    entries = _entries(r.json())
    assert entries[("creator", "Update")]["fieldsV1"] == {
        "f:data": {".": {}, "f:a": {}}
    }
    assert entries[("putter", "Update")]["fieldsV1"] == {"f:data": {"f:b": {}}}


def test_managed_fields_reset_with_empty_entry_not_with_empty_list(api, name):
    api.create_cm(name, {"a": "1"}, fieldManager="creator")
    r = api.request(
        "PATCH",
        api.cm_path(name),
        {"metadata": {"managedFields": []}},
        content_type=MERGE,
    )
    assert r.json()["metadata"]["managedFields"]
    r = api.request(
        "PATCH",
        api.cm_path(name),
        {"metadata": {"managedFields": [{}]}},
        content_type=MERGE,
    )
    assert r.status_code == 200
    assert "managedFields" not in r.json()["metadata"]


def test_status_subresource_entries(api, name):
    r = api.request(
        "POST",
        "/api/v1/namespaces",
        {"metadata": {"name": name}},
        params={"fieldManager": "c"},
    )
    assert r.status_code == 201, r.text
    r = api.request(
        "PATCH",
        f"/api/v1/namespaces/{name}/status",
        {"status": {"conditions": [{"type": "X", "status": "True"}]}},
        content_type=MERGE,
        params={"fieldManager": "s"},
    )
    assert r.status_code == 200, r.text
    entries = {e["manager"]: e for e in r.json()["metadata"]["managedFields"]}
    assert entries["s"]["subresource"] == "status"
    assert "f:status" in entries["s"]["fieldsV1"]
    assert "f:status" not in entries["c"]["fieldsV1"]
    api.request("DELETE", f"/api/v1/namespaces/{name}")


# -- dry run -----------------------------------------------------------------------
@pytest.mark.parametrize("value", ["", "None", "all"])
def test_bad_dry_run_values_are_422(api, name, value):
    r = api.request(
        "POST",
        api.cm_path() + f"?dryRun={value}" if value else api.cm_path() + "?dryRun",
        configmap(name, {"a": "1"}),
    )
    assert r.status_code == 422 and r.json()["reason"] == "Invalid"


def test_dry_run_every_verb(api, name):
    r = api.request(
        "POST", api.cm_path(), configmap(name, {"a": "1"}), params={"dryRun": "All"}
    )
    assert r.status_code == 201 and r.json()["data"] == {"a": "1"}
    assert api.request("GET", api.cm_path(name)).status_code == 404
    r = api.apply(name, configmap(name, {"a": "1"}), dryRun="All")
    assert r.status_code == 201
    assert api.request("GET", api.cm_path(name)).status_code == 404

    created = api.create_cm(name, {"a": "1"})
    rv = created["metadata"]["resourceVersion"]
    body = {**created, "data": {"a": "put"}}
    r = api.request("PUT", api.cm_path(name), body, params={"dryRun": "All"})
    assert r.status_code == 200 and r.json()["data"] == {"a": "put"}
    for content_type, patch in (
        (MERGE, {"data": {"a": "m"}}),
        (STRATEGIC, {"data": {"a": "s"}}),
        (JSON_PATCH, [{"op": "replace", "path": "/data/a", "value": "j"}]),
    ):
        r = api.request(
            "PATCH",
            api.cm_path(name),
            patch,
            content_type=content_type,
            params={"dryRun": "All"},
        )
        assert r.status_code == 200, r.text
    r = api.apply(name, configmap(name, {"a": "applied"}), force="true", dryRun="All")
    assert r.status_code == 200 and r.json()["data"] == {"a": "applied"}
    r = api.request("DELETE", api.cm_path(name), params={"dryRun": "All"})
    assert r.status_code == 200
    r = api.request(
        "DELETE",
        api.cm_path(),
        params={"dryRun": "All", "fieldSelector": f"metadata.name={name}"},
    )
    assert r.status_code == 200 and len(r.json()["items"]) == 1
    live = api.request("GET", api.cm_path(name)).json()
    assert live["data"] == {"a": "1"} and live["metadata"]["resourceVersion"] == rv


def test_dry_run_apply_still_checks_conflicts(api, name):
    api.apply(name, configmap(name, {"a": "1"}), manager="one")
    r = api.apply(name, configmap(name, {"a": "2"}), manager="two", dryRun="All")
    assert r.status_code == 409


# -- field validation ------------------------------------------------------------------
def _with_unknown(name):
    body = configmap(name, {"a": "1"})
    body["spec"] = {"x": 1}
    body["metadata"]["foo"] = "bar"
    return body


def _warnings(response):
    header = response.headers.get("Warning", "")
    return (
        [part.split(" - ", 1)[1] for part in header.split(", 299") if part]
        if header
        else []
    )


def test_field_validation_warn_is_default(api, name):
    r = api.request("POST", api.cm_path(), _with_unknown(name))
    assert r.status_code == 201
    assert (
        r.headers["Warning"]
        == '299 - "unknown field \\"metadata.foo\\"", 299 - "unknown field \\"spec\\""'
    )
    assert "spec" not in r.json() and "foo" not in r.json()["metadata"]


def test_field_validation_ignore(api, name):
    r = api.request(
        "POST", api.cm_path(), _with_unknown(name), params={"fieldValidation": "Ignore"}
    )
    assert r.status_code == 201 and "Warning" not in r.headers


def test_field_validation_strict_create_and_put_400(api, name):
    r = api.request(
        "POST", api.cm_path(), _with_unknown(name), params={"fieldValidation": "Strict"}
    )
    assert r.status_code == 400
    assert r.json()["message"] == (
        'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: '
        'unknown field "metadata.foo", unknown field "spec"'
    )
    created = api.create_cm(name)
    body = {**created, "spec": 1}
    r = api.request(
        "PUT", api.cm_path(name), body, params={"fieldValidation": "Strict"}
    )
    assert r.status_code == 400


def test_field_validation_strict_patch_422(api, name):
    api.create_cm(name)
    r = api.request(
        "PATCH",
        api.cm_path(name),
        {"spec": 1},
        content_type=MERGE,
        params={"fieldValidation": "Strict"},
    )
    assert r.status_code == 422
    assert 'unknown field "spec"' in r.json()["message"]
    r = api.apply(
        name,
        {**configmap(name, {"a": "1"}), "spec": 1},
        fieldValidation="Ignore",
        force="true",
    )
    # Apply cannot type an undeclared field whatever the validation (kube's
    # "failed to create typed patch object", a 500 in kube 1.28, 400 upstream).
    assert r.status_code == 400
    assert r.json()["message"].endswith(".spec: field not declared in schema")


def test_duplicate_json_keys(api, name):
    raw = '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"NAME"},"data":{"a":"1","a":"2"}}'
    raw = raw.replace("NAME", name)
    r = api.request("POST", api.cm_path(), raw, params={"fieldValidation": "Strict"})
    assert r.status_code == 400 and 'duplicate field "data.a"' in r.json()["message"]
    r = api.request("POST", api.cm_path(), raw)
    assert (
        r.status_code == 201
        and r.headers["Warning"] == '299 - "duplicate field \\"data.a\\""'
    )
    assert r.json()["data"] == {"a": "2"}
    r = api.request(
        "PATCH",
        api.cm_path(name),
        '{"data":{"b":"1","b":"2"}}',
        content_type=MERGE,
        params={"fieldValidation": "Strict"},
    )
    assert r.status_code == 422


def test_invalid_request_reports_its_own_error_first(api, name):
    body = _with_unknown(name)
    body["kind"] = "Secret"
    r = api.request("POST", api.cm_path(), body, params={"fieldValidation": "Strict"})
    assert (
        r.status_code == 400
        and "does not match the expected kind" in r.json()["message"]
    )


def test_apply_to_status_subresource(api, name):
    """Apply to /status owns status only, as a separate entry with subresource."""
    r = api.request("POST", "/api/v1/namespaces", {"metadata": {"name": name}})
    assert r.status_code == 201, r.text
    body = {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": name},
        "status": {"conditions": [{"type": "Y", "status": "True"}]},
    }
    r = api.request(
        "PATCH",
        f"/api/v1/namespaces/{name}/status",
        body,
        content_type="application/apply-patch+yaml",
        params={"fieldManager": "status-applier"},
    )
    assert r.status_code == 200, r.text
    entry = next(
        e
        for e in r.json()["metadata"]["managedFields"]
        if e["manager"] == "status-applier"
    )
    assert entry["operation"] == "Apply" and entry["subresource"] == "status"
    assert list(entry["fieldsV1"]) == ["f:status"]
    assert r.json()["status"]["conditions"] == [{"type": "Y", "status": "True"}]
    api.request("DELETE", f"/api/v1/namespaces/{name}")


def test_apply_to_missing_object_status_is_404(api, name):
    body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
    r = api.request(
        "PATCH",
        f"/api/v1/namespaces/{name}/status",
        body,
        content_type="application/apply-patch+yaml",
        params={"fieldManager": "x"},
    )
    assert r.status_code == 404
