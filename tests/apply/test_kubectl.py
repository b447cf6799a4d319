"""kubectl against kapi: server-side and client-side apply, diff, patch, edit,
label/annotate, server dry-run and strict validation, as against a real cluster."""

from __future__ import annotations

import json
import os
import stat

import yaml

from tests.apply.conftest import configmap


def _apply_file(kapi_server, tmp_path, obj, *args, check=True):
    path = tmp_path / "obj.yaml"
    path.write_text(yaml.safe_dump(obj))
    return kapi_server.kubectl("apply", "-f", str(path), *args, check=check)


def _get(kapi_server, name):
    out = kapi_server.kubectl(
        "get", "configmap", name, "-o", "json", "--show-managed-fields"
    )
    return json.loads(out.stdout)


def _managers(obj):
    return {
        (e["manager"], e["operation"]) for e in obj["metadata"].get("managedFields", [])
    }


def test_server_side_apply_conflict_and_force(kapi_server, tmp_path, name):
    """SSA creates, re-applies without a write, conflicts with another manager's
    field and takes it with --force-conflicts."""
    obj = configmap(name, {"a": "1", "b": "2"})
    out = _apply_file(kapi_server, tmp_path, obj, "--server-side")
    assert "serverside-applied" in out.stdout
    first = _get(kapi_server, name)
    assert _managers(first) == {("kubectl", "Apply")}
    _apply_file(kapi_server, tmp_path, obj, "--server-side")
    assert (
        _get(kapi_server, name)["metadata"]["resourceVersion"]
        == first["metadata"]["resourceVersion"]
    )

    other = configmap(name, {"a": "changed"})
    failed = _apply_file(
        kapi_server,
        tmp_path,
        other,
        "--server-side",
        "--field-manager=other",
        check=False,
    )
    assert failed.returncode != 0
    assert 'conflict with "kubectl": .data.a' in failed.stderr
    _apply_file(
        kapi_server,
        tmp_path,
        other,
        "--server-side",
        "--field-manager=other",
        "--force-conflicts",
    )
    live = _get(kapi_server, name)
    assert live["data"] == {"a": "changed", "b": "2"}
    owners = {e["manager"]: e["fieldsV1"] for e in live["metadata"]["managedFields"]}
    assert owners["other"] == {"f:data": {"f:a": {}}}
    assert owners["kubectl"] == {"f:data": {"f:b": {}}}


def test_client_side_apply_three_times_and_diff(kapi_server, tmp_path, name):
    """Client-side apply (last-applied annotation + strategic merge) removes a
    dropped key on the third apply; diff shows the pending change."""
    obj = configmap(name, {"a": "1", "b": "2"}, labels={"app": "x"})
    assert "created" in _apply_file(kapi_server, tmp_path, obj).stdout
    obj["data"]["b"] = "3"
    assert "configured" in _apply_file(kapi_server, tmp_path, obj).stdout
    obj["data"] = {"a": "1", "c": "4"}
    path = tmp_path / "obj.yaml"
    path.write_text(yaml.safe_dump(obj))
    diff = kapi_server.kubectl("diff", "-f", str(path), check=False)
    assert diff.returncode == 1, diff.stderr
    assert '-  b: "3"' in diff.stdout and '+  c: "4"' in diff.stdout
    _apply_file(kapi_server, tmp_path, obj)
    live = _get(kapi_server, name)
    assert live["data"] == {"a": "1", "c": "4"}
    assert ("kubectl-client-side-apply", "Update") in _managers(live)
    # Nothing pending any more.
    assert kapi_server.kubectl("diff", "-f", str(path), check=False).returncode == 0


def test_patch_types(kapi_server, tmp_path, name):
    _apply_file(kapi_server, tmp_path, configmap(name, {"a": "1"}))
    kapi_server.kubectl(
        "patch",
        "configmap",
        name,
        "--type",
        "json",
        "-p",
        '[{"op":"test","path":"/data/a","value":"1"},{"op":"add","path":"/data/j","value":"x"}]',
    )
    kapi_server.kubectl(
        "patch",
        "configmap",
        name,
        "--type",
        "merge",
        "-p",
        '{"data":{"a":null,"m":"y"}}',
    )
    kapi_server.kubectl(
        "patch", "configmap", name, "--type", "strategic", "-p", '{"data":{"s":"z"}}'
    )
    failed = kapi_server.kubectl(
        "patch",
        "configmap",
        name,
        "--type",
        "json",
        "-p",
        '[{"op":"test","path":"/data/j","value":"nope"}]',
        check=False,
    )
    assert failed.returncode != 0 and "testing value /data/j failed" in failed.stderr
    live = _get(kapi_server, name)
    assert live["data"] == {"j": "x", "m": "y", "s": "z"}
    assert ("kubectl-patch", "Update") in _managers(live)


def test_edit_with_editor_script(kapi_server, tmp_path, name):
    _apply_file(kapi_server, tmp_path, configmap(name, {"a": "1"}))
    editor = tmp_path / "editor.sh"
    editor.write_text('#!/bin/sh\nsed -i \'s/a: "1"/a: "edited"/\' "$1"\n')
    editor.chmod(editor.stat().st_mode | stat.S_IEXEC)
    env = {**os.environ, "EDITOR": str(editor), "KUBE_EDITOR": str(editor)}
    import subprocess

    from kapi_testserver import kubectl_binary

    out = subprocess.run(
        [
            kubectl_binary(),
            "--kubeconfig",
            str(kapi_server.kubeconfig_path),
            "edit",
            "configmap",
            name,
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    live = _get(kapi_server, name)
    assert live["data"] == {"a": "edited"}
    edit = [
        e for e in live["metadata"]["managedFields"] if e["manager"] == "kubectl-edit"
    ]
    assert edit and edit[0]["fieldsV1"] == {"f:data": {"f:a": {}}}


def test_label_and_annotate_overwrite(kapi_server, tmp_path, name):
    _apply_file(kapi_server, tmp_path, configmap(name, {"a": "1"}))
    kapi_server.kubectl("label", "configmap", name, "tier=one")
    assert (
        kapi_server.kubectl(
            "label", "configmap", name, "tier=two", check=False
        ).returncode
        != 0
    )
    kapi_server.kubectl("label", "configmap", name, "tier=two", "--overwrite")
    kapi_server.kubectl("annotate", "configmap", name, "note=a")
    kapi_server.kubectl("annotate", "configmap", name, "note=b", "--overwrite")
    live = _get(kapi_server, name)
    assert live["metadata"]["labels"]["tier"] == "two"
    assert live["metadata"]["annotations"]["note"] == "b"
    assert {("kubectl-label", "Update"), ("kubectl-annotate", "Update")} <= _managers(
        live
    )


def test_dry_run_server(kapi_server, tmp_path, name):
    """--dry-run=server on create, apply, patch, label and delete stores nothing."""
    obj = configmap(name, {"a": "1"})
    out = _apply_file(kapi_server, tmp_path, obj, "--server-side", "--dry-run=server")
    assert "server dry run" in out.stdout
    assert kapi_server.kubectl("get", "configmap", name, check=False).returncode != 0
    path = tmp_path / "obj.yaml"
    assert (
        "server dry run"
        in kapi_server.kubectl("create", "-f", str(path), "--dry-run=server").stdout
    )
    assert kapi_server.kubectl("get", "configmap", name, check=False).returncode != 0
    _apply_file(kapi_server, tmp_path, obj)
    before = _get(kapi_server, name)
    kapi_server.kubectl(
        "patch", "configmap", name, "-p", '{"data":{"a":"2"}}', "--dry-run=server"
    )
    kapi_server.kubectl("label", "configmap", name, "x=y", "--dry-run=server")
    kapi_server.kubectl("delete", "configmap", name, "--dry-run=server")
    after = _get(kapi_server, name)
    assert after == before


def test_validate_strict_and_warn(kapi_server, tmp_path, name):
    obj = configmap(name, {"a": "1"})
    obj["spec"] = {"x": 1}
    obj["metadata"]["bogus"] = True
    path = tmp_path / "obj.yaml"
    path.write_text(yaml.safe_dump(obj))
    strict = kapi_server.kubectl(
        "create", "-f", str(path), "--validate=strict", check=False
    )
    assert strict.returncode != 0
    assert (
        'strict decoding error: unknown field "metadata.bogus", unknown field "spec"'
        in strict.stderr
    )
    warn = kapi_server.kubectl("create", "-f", str(path), "--validate=warn")
    assert 'Warning: unknown field "spec"' in warn.stderr
    assert 'Warning: unknown field "metadata.bogus"' in warn.stderr
    live = _get(kapi_server, name)
    assert "spec" not in live and "bogus" not in live["metadata"]


def test_server_side_apply_takes_over_from_client_side_apply(
    kapi_server, tmp_path, name
):
    """After client-side applies, kubectl's server-side apply may change the fields
    recorded in last-applied-configuration without a conflict, and keeps the
    annotation in step."""
    obj = configmap(name, {"a": "1"})
    _apply_file(kapi_server, tmp_path, obj)
    obj["data"]["a"] = "2"
    _apply_file(kapi_server, tmp_path, obj, "--server-side")
    live = _get(kapi_server, name)
    assert live["data"] == {"a": "2"}
    last = json.loads(
        live["metadata"]["annotations"][
            "kubectl.kubernetes.io/last-applied-configuration"
        ]
    )
    assert last["data"] == {"a": "2"}
    # Another manager still conflicts.
    obj["data"]["a"] = "3"
    failed = _apply_file(
        kapi_server,
        tmp_path,
        obj,
        "--server-side",
        "--field-manager=someone",
        check=False,
    )
    assert failed.returncode != 0 and "conflict" in failed.stderr


def test_kubectl_create_records_its_manager(kapi_server, name):
    """kubectl create (a protobuf body) is recorded as kubectl-create, Update."""
    kapi_server.kubectl("create", "configmap", name, "--from-literal=a=1")
    live = _get(kapi_server, name)
    entries = {
        (e["manager"], e["operation"]): e for e in live["metadata"]["managedFields"]
    }
    assert entries[("kubectl-create", "Update")]["fieldsV1"] == {
        "f:data": {".": {}, "f:a": {}}
    }
