"""The GitOps pages of the admin in a real headless Chromium, against the
session's real ``serve``: the home (tiles, filters), a Sync's resource tree
down to the Pods its Deployment's ReplicaSets own, desired against live with a
drifted field marked, revisions with a diff and Roll back / Unpin, pages that
follow changes without a reload, and a user whom RBAC limits to one namespace.
Screenshots go to ``test-artifacts/admin/gitops-*.png``.

Two namespaces, each with a hosted GitRepository and a Sync ``app``: team-a
gets a Deployment and a ConfigMap in two pushes (blue, then green); team-b's
Sync waits for its first push, which the live test makes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from kapi_testserver import ROOT
from sync_gitops import hosted_sync, wait_for

from tests.admin.browser import ARTIFACTS, chromium, new_page, shot, sign_in

SYNC = "/admin/kapi/sync.kapi.dev/v1/syncs/{ns}/app/"


def deployment(image: str) -> dict:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "labels": {"app": "web"}},
            "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                     "template": {"metadata": {"labels": {"app": "web"}},
                                  "spec": {"containers": [{"name": "web", "image": image}]}}}}


def config(color: str) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "web-config"}, "data": {"color": color}}


class Env:
    def __init__(self, server, tmp) -> None:
        self.server = server
        self.a, self.work_a = hosted_sync(server, tmp, "team-a")
        self.b, self.work_b = hosted_sync(server, tmp, "team-b")
        self.work_a.write("app.yaml", deployment("nginx:1.25"), config("blue"))
        self.work_a.push("web: nginx and a blue page")
        self.first = self.head(self.work_a)
        self.wait_applied(self.a, self.first)
        self.work_a.write("app.yaml", deployment("nginx:1.25"), config("green"))
        self.work_a.push("web: the page turns green")
        self.second = self.head(self.work_a)
        self.wait_applied(self.a, self.second)
        wait_for(lambda: len(self.pods(self.a)) == 2, what="the Deployment's two Pods")

    @staticmethod
    def head(work) -> str:
        return work.git("rev-parse", "HEAD").stdout.strip()

    def sync(self, ns: str) -> dict:
        return json.loads(self.server.kubectl("get", "sync", "app", "-n", ns, "-o", "json").stdout)

    def wait_applied(self, ns: str, sha: str) -> None:
        wait_for(lambda: self.sync(ns).get("status", {}).get("lastAppliedRevision", "").endswith(sha),
                 timeout=60, what=f"{sha[:8]} applied in {ns}")

    def pods(self, ns: str) -> list[dict]:
        out = json.loads(self.server.kubectl("get", "pods", "-n", ns, "-o", "json").stdout)
        return [p for p in out["items"] if "deletionTimestamp" not in p["metadata"]]

    def color(self) -> str:
        return self.server.kubectl("get", "configmap", "web-config", "-n", self.a,
                                   "-o", "jsonpath={.data.color}").stdout

    def url(self, ns: str, page: str = "") -> str:
        return self.server.url + SYNC.format(ns=ns) + (f"{page}/" if page else "")


@pytest.fixture(scope="module")
def env(kapi_server, tmp_path_factory) -> Env:
    print(f"screenshots: {ARTIFACTS}/gitops-*.png")
    return Env(kapi_server, tmp_path_factory.mktemp("gitops"))


@pytest.fixture(scope="module")
def browser():
    with chromium() as b:
        yield b


@pytest.fixture(scope="module")
def page(browser, kapi_server):
    page = new_page(browser)
    sign_in(page, kapi_server)
    return page


def tile(ns: str) -> str:
    return f"#sync-{ns}-app"


def test_home_tiles_and_filters(env, page):
    page.goto(env.server.url + "/admin/")
    page.wait_for_selector(tile(env.a))
    text = page.inner_text(tile(env.a))
    assert page.get_attribute(tile(env.a), "data-state") == "ready"
    assert env.second[:8] in text and "web: the page turns green" in text and "t <t@example.com>" in text
    assert "2 applied" in text and "Current" in text
    assert page.get_attribute(tile(env.b), "data-state") == "never-applied"
    assert "never applied" in page.inner_text(tile(env.b)) and "applied 20" not in page.inner_text(tile(env.b))
    shot(page, "gitops-01-home")
    # Filters: namespace, status, text.
    page.select_option("#ns", env.a)
    page.click("#filters input[type=submit]")
    page.wait_for_selector(tile(env.a))
    assert page.locator(tile(env.b)).count() == 0
    page.goto(env.server.url + "/admin/?state=never-applied")
    page.wait_for_selector(tile(env.b))
    assert page.locator(tile(env.a)).count() == 0
    page.fill("#q", "turns green")
    page.click("#filters input[type=submit]")
    page.wait_for_selector("#no-rows")  # never-applied and "turns green": none
    page.goto(env.server.url + "/admin/?q=turns+green")
    page.wait_for_selector(tile(env.a))
    assert page.locator(tile(env.b)).count() == 0
    page.click("#kinds-link")
    page.wait_for_selector("#group-core")
    # A Sync that never applied anything shows no time under Revision.
    page.goto(env.url(env.b))
    assert page.inner_text("#sync-revision").strip() == "never applied"


def test_tree_from_the_sync_to_its_pods(env, page):
    page.goto(env.url(env.a))
    page.click("#tree-link")
    page.wait_for_selector("#tree")
    rows = page.eval_on_selector_all(
        "tr.tree-node", "rs => rs.map(r => [r.dataset.name, r.dataset.depth, r.dataset.state])")
    names = [r[0] for r in rows]
    assert ["ConfigMap/web-config", "0", "in-sync"] in rows
    deploy = names.index("Deployment/web")
    assert rows[deploy][1:] == ["0", "in-sync"]
    # The Deployment's ReplicaSet under it, and the ReplicaSet's two Pods under that.
    replicaset, pods = rows[deploy + 1], rows[deploy + 2:deploy + 4]
    assert replicaset[0].startswith("ReplicaSet/web-") and replicaset[1:] == ["1", "owned"]
    assert {p[0] for p in pods} == {f"Pod/{p['metadata']['name']}" for p in env.pods(env.a)}
    assert all(p[1:] == ["2", "owned"] for p in pods)
    shot(page, "gitops-02-tree")
    page.click(f'tr.tree-node[data-name="{pods[0][0]}"] a')
    page.wait_for_selector(".kapi-yaml")
    assert "kind: Pod" in page.inner_text(".kapi-yaml")


def test_desired_against_live_marks_drift_and_pages_follow_it_live(env, page):
    """Suspended, the Sync leaves a changed value alone: the diff marks it and
    names the manager; the open tree page shows the drift, and its correction
    once resumed, without a reload."""
    k = env.server.kubectl
    # A suspended Sync writes nothing; the drift below asks for a run, which
    # reads the Sync as it is then: suspended.
    k("patch", "sync", "app", "-n", env.a, "--type=merge", "-p", '{"spec":{"suspend":true}}')
    page.goto(env.url(env.a, "tree"))
    page.wait_for_selector("#live-badge")
    page.evaluate("window.kept = 'same page'")
    node = 'tr.tree-node[data-name="ConfigMap/web-config"]'
    assert page.get_attribute(node, "data-state") == "in-sync"

    k("patch", "configmap", "web-config", "-n", env.a, "--type=merge", "-p", '{"data":{"color":"red"}}')
    page.wait_for_selector(node + '[data-state="drifted"]')
    assert page.evaluate("window.kept") == "same page"
    shot(page, "gitops-03-tree-drifted")

    page.goto(env.url(env.a, "diff") + f"?object=ConfigMap/{env.a}/web-config")
    row = page.locator("tr", has=page.locator("td.diff-drifted"))
    assert row.count() == 1
    cells = row.locator("td").all_inner_texts()
    assert cells[0].strip() == "color: green" and cells[1].strip() == "color: red"
    assert "kubectl-patch" in cells[2]
    assert "1 drifted" in page.inner_text("details.diff-object summary")
    shot(page, "gitops-04-diff")

    # Resumed, the Sync corrects it; the tree page, left open, follows.
    page.goto(env.url(env.a, "tree"))
    page.wait_for_selector(node + '[data-state="drifted"]')
    page.evaluate("window.kept = 'same page'")
    k("patch", "sync", "app", "-n", env.a, "--type=merge", "-p", '{"spec":{"suspend":false}}')
    page.wait_for_selector(node + '[data-state="in-sync"]', timeout=40_000)
    assert page.evaluate("window.kept") == "same page" and env.color() == "green"


def test_home_follows_a_sync_going_ready(env, page):
    page.goto(env.server.url + "/admin/")
    page.wait_for_selector(tile(env.b) + '[data-state="never-applied"]')
    page.evaluate("window.kept = 'same page'")
    env.work_b.write("cm.yaml", config("blue"))
    env.work_b.push("team-b's first page")
    page.wait_for_selector(tile(env.b) + '[data-state="ready"]', timeout=40_000)
    assert page.evaluate("window.kept") == "same page"
    assert "team-b's first page" in page.inner_text(tile(env.b))
    shot(page, "gitops-05-home-live")


def test_revisions_diff_roll_back_and_unpin(env, page):
    page.goto(env.url(env.a, "revisions"))
    page.wait_for_selector("#revisions")
    table = page.inner_text("#revisions")
    assert "web: the page turns green" in table and "web: nginx and a blue page" in table
    diff = page.inner_text("#revision-diff")  # the two newest, compared by default
    assert "-  color: blue" in diff and "+  color: green" in diff
    shot(page, "gitops-06-revisions")

    # What a rollback would change, then Roll back.
    page.goto(env.url(env.a, "diff") + f"?revision={env.first}")
    assert "not applied" in page.inner_text("#diff-revision")
    page.goto(env.url(env.a, "revisions"))
    page.click("button.rollback")
    page.wait_for_selector("#sync-panel")
    wait_for(lambda: env.color() == "blue", timeout=60, what="the rollback applied")
    page.goto(env.url(env.a, "revisions"))
    assert env.first[:12] in page.inner_text("#sync-pin")
    shot(page, "gitops-07-pinned")
    page.click("#unpin")
    page.wait_for_selector("#sync-panel")
    wait_for(lambda: env.color() == "green", timeout=60, what="the unpinned Sync back on the newest")


def _make_staff(server, username: str, password: str) -> None:
    code = ("from django.contrib.auth import get_user_model;"
            f"get_user_model().objects.create_user({username!r}, password={password!r}, is_staff=True)")
    subprocess.run([sys.executable, str(ROOT / "manage.py"), "shell", "-c", code], check=True, cwd=ROOT,
                   env={**os.environ, "KAPI_DATA_DIR": str(server.data_dir)}, capture_output=True, timeout=120)


def test_a_user_limited_to_one_namespace(env, browser):
    """RBAC lets alice read only team-a: she sees team-a's Sync and tree, not
    team-b's Sync, not even by URL."""
    user = f"alice-{env.a[-6:]}"
    _make_staff(env.server, user, "pw-alice-1")
    rbac = "rbac.authorization.k8s.io/v1"
    docs = [
        {"apiVersion": rbac, "kind": "Role", "metadata": {"name": "read-all", "namespace": env.a},
         "rules": [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["get", "list", "watch"]}]},
        {"apiVersion": rbac, "kind": "RoleBinding", "metadata": {"name": "alice-reads", "namespace": env.a},
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "read-all"},
         "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}]},
    ]
    env.server.kubectl("apply", "-f", "-", input="\n---\n".join(json.dumps(d) for d in docs))
    page = new_page(browser)
    sign_in(page, env.server, user, "pw-alice-1")
    page.goto(env.server.url + "/admin/")
    page.wait_for_selector(tile(env.a))
    assert page.locator(tile(env.b)).count() == 0
    assert env.b not in page.inner_text("#ns")
    shot(page, "gitops-08-limited-home")
    page.goto(env.url(env.a, "tree"))
    page.wait_for_selector('tr.tree-node[data-name="Deployment/web"]')
    for url in (env.url(env.b), env.url(env.b, "tree"), env.url(env.b, "diff"), env.url(env.b, "revisions")):
        response = page.goto(url)
        assert response.status == 403, url
    page.goto(env.server.url + f"/admin/?namespace={env.b}")
    assert page.locator(tile(env.b)).count() == 0
    shot(page, "gitops-09-limited-forbidden")
    page.context.close()
