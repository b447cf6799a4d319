"""The admin pages with the Django test client: permissions, content, query counts."""

from __future__ import annotations

import importlib
import logging
import re

import pytest
import yaml
from django.contrib.admin.models import LogEntry
from django.contrib.auth.models import Permission

from kapi.admin.superuser import ensure_admin_user, password_file
from kapi.registry.options import UpdateOptions
from kapi.storage import Key
from kapi.storage.postgres import PostgresStorage
from tests.admin.helpers import configmap, rt

pytestmark = pytest.mark.django_db

CM = "/admin/kapi/core/v1/configmaps/"


def cm_url(name: str, ns: str = "default", page: str = "") -> str:
    return f"{CM}{ns}/{name}/" + (f"{page}/" if page else "")


def names(response) -> list[str]:
    return re.findall(r'<td><a href="/admin/kapi/core/v1/configmaps/[^"]+">([^<]+)</a>', response.content.decode())


# -- sign-in and permissions ----------------------------------------------------

def test_anonymous_and_non_staff_are_sent_to_login(client, django_user_model):
    """Every page needs a signed-in staff user."""
    for url in ("/admin/", CM, "/admin/syncs/"):
        response = client.get(url)
        assert response.status_code == 302 and "/admin/login/" in response["Location"]
    django_user_model.objects.create_user("plain", password="pw")
    client.login(username="plain", password="pw")
    assert client.get(CM).status_code == 302


def test_staff_browse_but_need_the_permission_to_edit(client, staff, registry):
    """Viewing needs staff only; create, edit and delete need edit_objects."""
    configmap(registry, "a")
    client.force_login(staff)
    assert client.get(cm_url("a")).status_code == 200
    assert b"edit-link" not in client.get(cm_url("a")).content
    assert client.get(cm_url("a", page="edit")).status_code == 403
    assert client.post(cm_url("a", page="delete")).status_code == 403
    assert client.post(CM + "create/", {"yaml": "{}"}).status_code == 403


def test_first_admin_user_and_password_file(tmp_path, django_user_model):
    """Without a superuser, one named admin is made and its password written once."""
    django_user_model.objects.filter(is_superuser=True).delete()
    assert ensure_admin_user(tmp_path)
    password = password_file(tmp_path).read_text().strip()
    assert (password_file(tmp_path).stat().st_mode & 0o777) == 0o600
    assert django_user_model.objects.get(username="admin").check_password(password)
    assert not ensure_admin_user(tmp_path)


# -- browsing -------------------------------------------------------------------

def test_kinds_page_lists_groups_and_kinds_as_discovery(client, staff):
    """The kind tables are one click from the GitOps home."""
    client.force_login(staff)
    home = client.get("/admin/").content.decode()
    assert 'id="kinds-link"' in home and 'href="/admin/kinds/"' in home
    page = client.get("/admin/kinds/").content.decode()
    assert 'id="group-core"' in page and 'id="group-coordination.k8s.io"' in page
    for kind in ("ConfigMap", "Secret", "Namespace", "Lease"):
        assert f">{kind}</a>" in page


def test_list_filters_search_selector_and_columns(client, staff, registry):
    ns_type = rt("namespaces")
    registry.create(ns_type, "", {"metadata": {"name": "other"}})
    configmap(registry, "web-1", labels={"app": "web"})
    configmap(registry, "db-1", labels={"app": "db"})
    configmap(registry, "web-2", namespace="other", labels={"app": "web"})
    client.force_login(staff)
    page = client.get(CM).content.decode()
    assert "<th" in page and ">Namespace<" in page and ">Data<" in page and ">Age<" in page
    assert names(client.get(CM)) == ["db-1", "web-1", "web-2"]
    assert names(client.get(CM, {"namespace": "default"})) == ["db-1", "web-1"]
    assert names(client.get(CM, {"q": "web"})) == ["web-1", "web-2"]
    assert names(client.get(CM, {"labels": "app in (db)"})) == ["db-1"]
    assert names(client.get(CM, {"sort": "-name"})) == ["web-2", "web-1", "db-1"]
    assert names(client.get(CM, {"sort": "-updated"})) == ["web-2", "db-1", "web-1"]
    bad = client.get(CM, {"labels": "app in (("})
    assert bad.status_code == 200 and b"Label selector:" in bad.content


@pytest.mark.parametrize("sort", ["name", "-name", "updated", "-updated"])
def test_keyset_pagination_walks_every_object_once(client, staff, registry, sort):
    for i in range(120):
        configmap(registry, f"cm-{i:03d}")
    client.force_login(staff)
    seen, url, pages = [], CM + f"?sort={sort}", []
    while url:
        response = client.get(url)
        pages.append(names(response))
        seen += pages[-1]
        match = re.search(r'href="([^"]+)" id="next-page"', response.content.decode())
        url = CM + match.group(1).replace("&amp;", "&") if match else ""
    assert [len(p) for p in pages] == [50, 50, 20]
    expected = [f"cm-{i:03d}" for i in range(120)]
    assert seen == (expected if sort in ("name", "updated") else expected[::-1])
    # Back from the last page gives the middle one.
    previous = re.search(r'href="([^"]+)" id="prev-page"', response.content.decode()).group(1)
    assert names(client.get(CM + previous.replace("&amp;", "&"))) == pages[1]


@pytest.fixture
def steady_catalog(monkeypatch) -> None:
    """The CRD catalog's once-a-second freshness check, and RBAC's and the
    accounts' identities' quarter-second ones, are time-driven, not
    per-object: keep them out of query counts so a slow machine cannot add them."""
    for module in ("kapi.registry.catalog", "kapi.auth.rbac", "kapi.auth.djangousers"):
        monkeypatch.setattr(importlib.import_module(module), "FRESHNESS_SECONDS", 3600.0)


def test_list_query_count_does_not_grow_with_objects(
    client, staff, registry, django_assert_num_queries, steady_catalog
):
    """The page, the count and the namespaces: three statements, plus four for the
    session, the user and the user's permissions."""
    client.force_login(staff)
    for i in range(3):
        configmap(registry, f"few-{i}")
    client.get(CM)  # warm the permission cache of the session's user
    with django_assert_num_queries(7) as few:
        client.get(CM)
    for i in range(40):
        configmap(registry, f"many-{i}")
    with django_assert_num_queries(len(few.captured_queries)):
        client.get(CM)


# -- object page ------------------------------------------------------------------

MANAGED = [
    {"manager": "kubectl-client-side-apply", "operation": "Update", "apiVersion": "v1",
     "time": "2024-01-01T00:00:00Z", "fieldsType": "FieldsV1",
     "fieldsV1": {"f:data": {".": {}, "f:color": {}}, "f:metadata": {"f:labels": {"f:app": {}}}}},
    {"manager": "kapi-admin", "operation": "Update", "apiVersion": "v1",
     "time": "2024-01-02T00:00:00Z", "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {"f:size": {}}}},
]


def _stored_with_managed_fields(name: str) -> dict:
    """A ConfigMap written straight to storage with managedFields (as the patch work will)."""
    obj = {
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "default", "uid": f"00000000-0000-0000-0000-{abs(hash(name)) % 10**12:012d}",
                     "creationTimestamp": "2024-01-01T00:00:00Z", "labels": {"app": "web"},
                     "managedFields": MANAGED},
        "data": {"color": "blue", "size": "L"},
    }
    return PostgresStorage().create(Key("", "configmaps", "default", name), obj)


def test_object_page_shows_yaml_owners_metadata_and_relations(client, staff, registry):
    owner = _stored_with_managed_fields("owner")
    uid = owner["metadata"]["uid"]
    configmap(registry, "child", ownerReferences=[
        {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": uid}])
    registry.create(rt("events"), "default", {
        "metadata": {"name": "ev1", "namespace": "default"},
        "involvedObject": {"kind": "ConfigMap", "name": "owner", "namespace": "default", "uid": uid},
        "reason": "Tested", "message": "hello from a test", "type": "Normal"})
    client.force_login(staff)
    page = client.get(cm_url("owner")).content.decode()
    # YAML, highlighted, with each field's owner beside it.
    assert 'class="y-nt">color</span>' in page
    line = re.search(r'<tr><td class="code">.*?color.*?</td><td class="owners">(.*?)</td>', page).group(1)
    assert "kubectl-client-side-apply (Update)" in line
    line = re.search(r'<tr><td class="code">.*?size.*?</td><td class="owners">(.*?)</td>', page).group(1)
    assert "kapi-admin (Update)" in line and "kubectl" not in line
    # The copyable text is the object, without managedFields.
    text = re.search(r'<textarea id="yaml-text"[^>]*>(.*?)</textarea>', page, re.S).group(1)
    copied = yaml.safe_load(text.replace("&#x27;", "'").replace("&quot;", '"'))
    assert copied["data"] == {"color": "blue", "size": "L"} and "managedFields" not in copied["metadata"]
    assert ">app</th><td>web</td>" in page
    assert 'href="/admin/kapi/core/v1/configmaps/default/child/">default/child</a>' in page
    assert "hello from a test" in page
    child = client.get(cm_url("child")).content.decode()
    assert 'href="/admin/kapi/core/v1/configmaps/default/owner/">owner</a>' in child


def test_conditions_table(client, staff, registry):
    registry.create(rt("namespaces"), "", {"metadata": {"name": "cond"}})
    storage = PostgresStorage()
    key = Key("", "namespaces", "", "cond")

    def add(obj):
        obj["status"] = {"phase": "Active", "conditions": [
            {"type": "NamespaceDeletionDiscoveryFailure", "status": "False", "reason": "ResourcesDiscovered",
             "message": "All resources successfully discovered"}]}
        return obj

    storage.guaranteed_update(key, add)
    client.force_login(staff)
    page = client.get("/admin/kapi/core/v1/namespaces/_/cond/").content.decode()
    assert 'id="conditions"' in page and "All resources successfully discovered" in page


def test_object_page_query_count_is_fixed(client, staff, registry, django_assert_num_queries, steady_catalog):
    """get, dependents, events, history (+ four for session, user and permissions):
    the same with 1 or 31 versions and 30 dependents."""
    configmap(registry, "q")
    client.force_login(staff)
    client.get(cm_url("q"))
    with django_assert_num_queries(8) as first:
        client.get(cm_url("q"))
    cm = rt("configmaps")
    for i in range(30):
        registry.update_with(cm, "default", "q", lambda o, i=i: {**o, "data": {"k": str(i)}})
        configmap(registry, f"dep-{i}", ownerReferences=[
            {"apiVersion": "v1", "kind": "ConfigMap", "name": "q", "uid": registry.get(cm, "default", "q")["metadata"]["uid"]}])
    with django_assert_num_queries(len(first.captured_queries)):
        page = client.get(cm_url("q")).content.decode()
    assert "History (31 in the change log)" in page


def test_history_diff_between_any_two_versions(client, staff, registry):
    cm = rt("configmaps")
    first = configmap(registry, "h", data={"k": "one"})
    second = registry.update_with(cm, "default", "h", lambda o: {**o, "data": {"k": "two"}})
    third = registry.update_with(cm, "default", "h", lambda o: {**o, "data": {"k": "three"}})
    client.force_login(staff)
    page = client.get(cm_url("h", page="history")).content.decode()
    assert "-  k: two" in re.sub(r"<[^>]+>", "", page) and "+  k: three" in re.sub(r"<[^>]+>", "", page)
    a, c = first["metadata"]["resourceVersion"], third["metadata"]["resourceVersion"]
    page = client.get(cm_url("h", page="history"), {"a": a, "b": c}).content.decode()
    text = re.sub(r"<[^>]+>", "", page)
    assert "-  k: one" in text and "+  k: three" in text and "k: two" not in text
    assert second["metadata"]["resourceVersion"] in page


# -- edits ------------------------------------------------------------------------

def test_create_through_the_registry(client, editor, registry):
    client.force_login(editor)
    text = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: made\n  namespace: default\ndata:\n  a: b\n"
    response = client.post(CM + "create/", {"yaml": text})
    assert response.status_code == 302 and response["Location"] == cm_url("made")
    assert registry.get(rt("configmaps"), "default", "made")["data"] == {"a": "b"}
    assert LogEntry.objects.filter(user=editor, change_message="Created").exists()


def test_invalid_create_shows_causes_and_keeps_text(client, editor):
    client.force_login(editor)
    text = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: Not_Valid\ndata:\n  a: b\n"
    response = client.post(CM + "create/", {"yaml": text})
    assert response.status_code == 422
    page = response.content.decode()
    assert "Invalid" in page and "metadata.name" in page and "Not_Valid" in page
    broken = client.post(CM + "create/", {"yaml": "a: [1"})
    assert broken.status_code == 400 and b"does not parse" in broken.content and b"a: [1" in broken.content


def test_edit_saves_with_resource_version_and_refuses_a_stale_one(client, editor, registry):
    cm = rt("configmaps")
    configmap(registry, "e", data={"color": "blue"})
    client.force_login(editor)
    page = client.get(cm_url("e", page="edit")).content.decode()
    text = re.search(r'<textarea name="yaml"[^>]*>(.*?)</textarea>', page, re.S).group(1)
    text = text.replace("&#x27;", "'").replace("&quot;", '"')
    assert "resourceVersion" in text
    edited = text.replace("color: blue", "color: green")
    # Someone else writes first: the edit is stale.
    registry.update_with(cm, "default", "e", lambda o: {**o, "data": {"color": "red"}})
    response = client.post(cm_url("e", page="edit"), {"yaml": edited})
    assert response.status_code == 409
    page = response.content.decode()
    assert "Conflict" in page and "color: green" in page and 'id="conflict-diff"' in page
    assert registry.get(cm, "default", "e")["data"] == {"color": "red"}
    # Fresh text saves.
    fresh = yaml.safe_dump(registry.get(cm, "default", "e")).replace("color: red", "color: green")
    response = client.post(cm_url("e", page="edit"), {"yaml": fresh})
    assert response.status_code == 302
    assert registry.get(cm, "default", "e")["data"] == {"color": "green"}


def test_edit_uses_field_manager_kapi_admin(client, editor, registry, monkeypatch):
    from kapi.registry.store import Registry

    seen = {}
    original = Registry.update

    def spy(self, rt_, ns, name, body, options: UpdateOptions | None = None):
        seen["manager"] = options.field_manager
        return original(self, rt_, ns, name, body, options)

    monkeypatch.setattr(Registry, "update", spy)
    configmap(registry, "fm")
    client.force_login(editor)
    body = yaml.safe_dump(registry.get(rt("configmaps"), "default", "fm"))
    assert client.post(cm_url("fm", page="edit"), {"yaml": body.replace("k: v", "k: w")}).status_code == 302
    assert seen["manager"] == "kapi-admin"


def test_delete_honours_finalizers(client, editor, registry):
    cm = rt("configmaps")
    configmap(registry, "gone")
    configmap(registry, "held", finalizers=["example.com/hold"])
    client.force_login(editor)
    assert client.post(cm_url("gone", page="delete")).status_code == 302
    assert client.get(cm_url("gone")).status_code == 404
    response = client.post(cm_url("held", page="delete"))
    assert response.status_code == 302 and response["Location"] == cm_url("held")
    held = registry.get(cm, "default", "held")
    assert "deletionTimestamp" in held["metadata"]
    assert b"waiting for finalizers" in client.get(cm_url("held")).content


# -- secrets ------------------------------------------------------------------------

SECRET = "/admin/kapi/core/v1/secrets/default/sec/"


@pytest.fixture
def secret(registry):
    return registry.create(rt("secrets"), "default", {
        "metadata": {"name": "sec", "namespace": "default"}, "stringData": {"password": "hunter2"}})


def test_secret_values_hidden_by_default(client, editor, secret):
    client.force_login(editor)
    page = client.get(SECRET).content.decode()
    assert "aHVudGVyMg==" not in page and "(hidden, 12 chars)" in page
    assert 'id="reveal"' not in page
    assert client.post(SECRET + "reveal/").status_code == 403
    assert client.get(SECRET + "edit/").status_code == 403
    history = client.get(SECRET + "history/").content.decode()
    assert "aHVudGVyMg==" not in history


def test_reveal_needs_the_permission_and_is_logged(client, staff, secret, caplog):
    staff.user_permissions.add(Permission.objects.get(codename="reveal_secrets"))
    client.force_login(staff)
    assert 'id="reveal"' in client.get(SECRET).content.decode()
    with caplog.at_level(logging.WARNING, logger="kapi.admin.audit"):
        page = client.post(SECRET + "reveal/").content.decode()
    assert "aHVudGVyMg==" in page
    assert any("secret revealed: user=viewer secret=default/sec" in r.getMessage() for r in caplog.records)
    entry = LogEntry.objects.get(user=staff)
    assert "Revealed the values of Secret default/sec" in entry.change_message


# -- syncs ------------------------------------------------------------------------------

def test_syncs_page_says_when_no_sync_kinds_are_served(client, staff):
    from kapi.registry.catalog import catalog

    client.force_login(staff)
    page = client.get("/admin/syncs/").content.decode()
    served = [t for t in catalog().types() if t.group == "sync.kapi.dev"]
    if served:
        assert 'id="section-Sync"' in page
    else:
        assert 'id="no-syncs"' in page and "sync.kapi.dev" in page


# -- GitOps pages: live polling, desired against live ---------------------------

def test_live_says_whether_a_page_is_stale(client, staff, registry):
    """live/ answers from the change log whether anything in the page's
    namespaces (or collections) changed since the version it was rendered at."""
    registry.create(rt("namespaces"), "", {"metadata": {"name": "elsewhere"}})
    client.force_login(staff)
    since = client.get("/admin/live/").json()["rv"]
    assert since > 0
    configmap(registry, "moved", namespace="elsewhere")
    mine = client.get("/admin/live/", {"since": since, "ns": "default"}).json()
    assert mine["changed"] is False and mine["rv"] > since
    theirs = client.get("/admin/live/", {"since": since, "ns": "elsewhere"}).json()
    assert theirs["changed"] is True
    by_kind = client.get("/admin/live/", {"since": since, "res": "/configmaps"}).json()
    assert by_kind["changed"] is True
    assert client.get("/admin/live/", {"since": mine["rv"], "ns": "elsewhere"}).json()["changed"] is False


def test_desired_against_live_aligns_fields_and_classes_them():
    """Both sides line up field by field (live's own order does not matter);
    a changed value is drifted, another manager's field "other", a field
    nobody owns the server's default, a desired field absent from live missing."""
    from kapi.admin.desired import compare

    desired = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "labels": {"x": "1"}},
               "data": {"color": "green", "size": "L"}}
    live = {"kind": "ConfigMap", "apiVersion": "v1", "data": {"color": "red"},
            "metadata": {"name": "a", "uid": "u", "labels": {"x": "1", "team": "web"}, "managedFields": [
                {"manager": "kapi-sync", "operation": "Apply", "fieldsType": "FieldsV1",
                 "fieldsV1": {"f:metadata": {"f:labels": {"f:x": {}}}, "f:data": {"f:size": {}}}},
                {"manager": "kubectl-edit", "operation": "Update", "fieldsType": "FieldsV1",
                 "fieldsV1": {"f:data": {"f:color": {}}, "f:metadata": {"f:labels": {"f:team": {}}}}}]},
            "immutable": False}
    result = compare(desired, live)
    rows = [(left.text if left else None, r.text if r else None, (left or r).css, r.owners if r else [])
            for left, r in result.rows]
    assert ("  color: green", "  color: red", "drifted", ["kubectl-edit (Update)"]) in rows
    assert ("  size: L", None, "missing", []) in rows
    assert (None, "    team: web", "other", ["kubectl-edit (Update)"]) in rows
    assert (None, "immutable: false", "default", []) in rows
    assert ("apiVersion: v1", "apiVersion: v1", "same", []) == rows[0]
    assert "uid: u" not in str(rows) and result.counts["drifted"] == 1 and result.differs
