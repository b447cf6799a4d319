"""End to end in a real headless Chromium (Debian's package, driven by Playwright).

Against the session's real ``serve`` (HTTPS with its own CA): sign in with the
generated admin password, browse to a ConfigMap made with kubectl, read its
YAML and field owners, edit a value and read it back with kubectl, have a stale
edit refused, and visit the Syncs page. Screenshots of the main pages go to
``test-artifacts/admin/``.
"""

from __future__ import annotations

import json
import uuid

import pytest

from tests.admin.browser import chromium, new_page, shot


@pytest.fixture(scope="module")
def page():
    with chromium() as browser:
        yield new_page(browser)


def apply(server, manifest: dict) -> None:
    server.kubectl("apply", "-f", "-", input=json.dumps(manifest))


def test_sign_in_browse_edit_and_conflict(kapi_server, page):
    ns = f"e2e-{uuid.uuid4().hex[:8]}"
    apply(kapi_server, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    apply(kapi_server, {
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "web-config", "namespace": ns, "labels": {"app": "web"}},
        "data": {"color": "blue", "size": "L"},
    })
    password = (kapi_server.data_dir / "admin-password").read_text().strip()

    # Sign in: the GitOps home, one click from the kind tables.
    page.goto(kapi_server.url + "/admin/")
    assert "/admin/login/" in page.url
    shot(page, "01-login")
    page.fill("#id_username", "admin")
    page.fill("#id_password", password)
    page.click("input[type=submit]")
    page.wait_for_selector("#syncs")
    page.click("#kinds-link")
    page.wait_for_selector("#group-core")
    # The admin's own CSS loads (WhiteNoise under uvicorn).
    assert page.evaluate("getComputedStyle(document.querySelector('#header')).display") == "flex"
    shot(page, "02-index")

    # Groups -> kinds -> objects, filtered to the namespace.
    page.click("#group-core >> text=ConfigMap")
    page.wait_for_selector("#result_list")
    # The namespace also holds the root-CA publisher's ConfigMap: the label
    # selector keeps to the test's own.
    page.select_option("#ns", ns)
    page.fill("#labels", "app=web")
    page.click("#filters input[type=submit]")
    page.wait_for_selector("#result_list >> text=web-config")
    assert page.inner_text("#total").startswith("1 configmaps")
    shot(page, "03-configmaps")
    page.click("#result_list >> text=web-config")

    # The object page: YAML, and the field owners when the object has managedFields.
    page.wait_for_selector(".kapi-yaml")
    yaml_text = page.inner_text(".kapi-yaml")
    assert "color: blue" in yaml_text and "size: L" in yaml_text
    stored = json.loads(kapi_server.kubectl(
        "get", "configmap", "web-config", "-n", ns, "-o", "json", "--show-managed-fields").stdout)
    for entry in stored["metadata"].get("managedFields") or []:
        assert entry["manager"] in page.inner_text("#field-owners")
    shot(page, "04-object")

    # Edit a value; kubectl reads the change.
    page.click("#edit-link")
    editor = page.locator("#yaml-editor")
    editor.fill(editor.input_value().replace("color: blue", "color: green"))
    page.click("#save")
    page.wait_for_selector(".kapi-yaml")
    assert "color: green" in page.inner_text(".kapi-yaml")
    got = kapi_server.kubectl("get", "configmap", "web-config", "-n", ns, "-o", "jsonpath={.data.color}")
    assert got.stdout == "green"

    # A stale edit: kubectl writes while the editor is open; saving is refused
    # and the text typed is kept.
    page.click("#edit-link")
    editor = page.locator("#yaml-editor")
    mine = editor.input_value().replace("size: L", "size: XL")
    current = json.loads(kapi_server.kubectl("get", "configmap", "web-config", "-n", ns, "-o", "json").stdout)
    current["data"]["color"] = "red"
    kapi_server.kubectl("replace", "-f", "-", input=json.dumps(current))
    editor.fill(mine)
    page.click("#save")
    page.wait_for_selector("#edit-error")
    assert "Conflict" in page.inner_text("#edit-error")
    assert "size: XL" in page.locator("#yaml-editor").input_value()
    shot(page, "05-stale-edit")
    got = kapi_server.kubectl("get", "configmap", "web-config", "-n", ns, "-o", "jsonpath={.data}")
    assert json.loads(got.stdout) == {"color": "red", "size": "L"}

    # History with a diff of the last two versions.
    page.goto(page.url.replace("/edit/", "/history/"))
    page.wait_for_selector("#diff")
    assert "color: red" in page.inner_text("#diff")
    shot(page, "06-history")


def test_syncs_page_suspends_resumes_and_reconciles_a_sync(kapi_server, page, tmp_path):
    """The Syncs page lists a Sync fed by a hosted repository; from its page,
    Suspend stops it applying a new push, Resume applies it, and Reconcile now
    sets sync.kapi.dev/requestedAt, which the workers handle."""
    import time

    from sync_gitops import Work, sync_namespace, wait_for

    resources = kapi_server.kubectl("api-resources", "--api-group=sync.kapi.dev", "-o", "name").stdout
    assert "syncs.sync.kapi.dev" in resources
    ns = f"e2e-sync-{uuid.uuid4().hex[:6]}"
    for doc in sync_namespace(ns):
        apply(kapi_server, doc)
    apply(kapi_server, {"apiVersion": "sync.kapi.dev/v1", "kind": "GitRepository",
                        "metadata": {"name": "site", "namespace": ns}, "spec": {}})
    apply(kapi_server, {"apiVersion": "sync.kapi.dev/v1", "kind": "Sync",
                        "metadata": {"name": "site", "namespace": ns},
                        "spec": {"sourceRef": {"name": "site"}, "path": "./"}})
    work = Work(kapi_server, ns, "site", tmp_path / "site")
    work.write("cm.yaml", {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "page"},
                           "data": {"v": "1"}})
    work.push("one")

    def sync() -> dict:
        return json.loads(kapi_server.kubectl("get", "sync", "site", "-n", ns, "-o", "json").stdout)

    def value() -> str:
        out = kapi_server.kubectl("get", "configmap", "page", "-n", ns, "-o", "jsonpath={.data.v}", check=False)
        return out.stdout

    wait_for(lambda: value() == "1", what="first revision applied")
    page.goto(kapi_server.url + "/admin/syncs/")
    if "/admin/login/" in page.url:
        password = (kapi_server.data_dir / "admin-password").read_text().strip()
        page.fill("#id_username", "admin")
        page.fill("#id_password", password)
        page.click("input[type=submit]")
    page.wait_for_selector("#section-Sync")
    shot(page, "07-syncs")
    page.click("#section-Sync a:text-is('site')")
    page.wait_for_selector("#sync-panel")
    page.click("#suspend")
    page.wait_for_selector("#resume")
    assert sync()["spec"]["suspend"] is True
    work.write("cm.yaml", {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "page"},
                           "data": {"v": "2"}})
    work.push("two")
    time.sleep(2)
    assert value() == "1"  # suspended: the new revision waits
    page.click("#resume")
    page.wait_for_selector("#suspend")
    wait_for(lambda: value() == "2", what="the resumed Sync to apply the latest revision")
    page.click("#reconcile")
    page.wait_for_selector("#sync-panel")
    requested = sync()["metadata"]["annotations"]["sync.kapi.dev/requestedAt"]
    wait_for(lambda: sync().get("status", {}).get("lastHandledReconcileAt") == requested,
             what="the requested reconcile to be handled")
    page.reload()
    assert "True ReconciliationSucceeded" in page.inner_text("#sync-ready")
    shot(page, "08-sync")
