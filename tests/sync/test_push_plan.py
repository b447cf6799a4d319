"""A push prints the plan of every Sync that uses the branch: objects to
create, to change (the fields, from a server-side dry-run, so defaults and
other managers' fields are no change) and to prune; bounded; no Secret value."""

from __future__ import annotations

from sync_gitops import Work, create, sync_namespace, unique, wait_for

API = "sync.kapi.dev/v1"


def _setup(server, tmp_path) -> tuple[str, Work]:
    ns = unique("plan")
    create(server, *sync_namespace(ns),
           {"apiVersion": API, "kind": "GitRepository", "metadata": {"name": "app", "namespace": ns}, "spec": {}},
           {"apiVersion": API, "kind": "Sync", "metadata": {"name": "app", "namespace": ns},
            "spec": {"sourceRef": {"name": "app"}}})
    return ns, Work(server, ns, "app", tmp_path / ns)


def _plan(stderr: str, ns: str) -> list[str]:
    prefix = f"remote: kapi: Sync {ns}/app: "
    return [line[len(prefix):].rstrip() for line in stderr.splitlines() if line.startswith(prefix)]


def _applied(server, ns: str, work: Work) -> None:
    head = work.git("rev-parse", "HEAD").stdout.strip()

    def done() -> bool:
        out = server.kubectl("get", "sync", "app", "-n", ns,
                             "-o", "jsonpath={.status.lastAppliedRevision}", check=False).stdout
        return out.endswith(head)

    wait_for(done, what="the revision to be applied")


def test_the_push_prints_creates_changes_and_prunes(kapi_server, tmp_path):
    ns, work = _setup(kapi_server, tmp_path)
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "data": {"v": "1", "w": "x"}}
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"},
              "stringData": {"password": "hunter2-first"}}
    work.write("a.yaml", cm)
    work.write("b.yaml", {**cm, "metadata": {"name": "b"}})
    work.write("s.yaml", secret)
    plan = _plan(work.push("first").stderr, ns)
    assert plan[0] == "plan: 3 to create, 0 to change, 0 to prune, 0 unchanged", plan
    assert set(plan[1:]) == {f"  + ConfigMap {ns}/a", f"  + ConfigMap {ns}/b", f"  + Secret {ns}/s"}
    _applied(kapi_server, ns, work)

    # Another manager's field is not the push's change; a default is not either.
    kapi_server.kubectl("label", "configmap", "a", "-n", ns, "team=blue")
    work.write("a.yaml", {**cm, "data": {"v": "2", "w": "x"}})
    work.remove("b.yaml")
    work.write("s.yaml", {**secret, "stringData": {"password": "hunter2-second"}})
    done = work.push("second")
    plan = _plan(done.stderr, ns)
    assert plan[0] == "plan: 0 to create, 2 to change, 1 to prune, 0 unchanged", plan
    assert f"  ~ ConfigMap {ns}/a: data.v: 1 → 2" in plan
    assert f"  ~ Secret {ns}/s: data.password" in plan
    assert f"  - ConfigMap {ns}/b" in plan
    assert "hunter2" not in done.stderr and "aHVudGVy" not in done.stderr
    _applied(kapi_server, ns, work)

    # Unchanged objects print nothing but the count; long plans are bounded.
    work.write("many.yaml", *[{**cm, "metadata": {"name": f"m{i:02d}"}} for i in range(30)])
    plan = _plan(work.push("many").stderr, ns)
    assert plan[0] == "plan: 30 to create, 0 to change, 0 to prune, 2 unchanged", plan
    assert len(plan) == 22 and plan[-1] == "  … and 10 more"


def test_a_push_to_an_untracked_branch_is_a_preview(kapi_server, tmp_path):
    """A branch no Sync tracks: the push prints each Sync's problems and plan
    for it and changes nothing (resourceVersions and the Sync's status stay)."""
    ns, work = _setup(kapi_server, tmp_path)
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "data": {"v": "1"}}
    work.write("a.yaml", cm)
    work.push("first")
    _applied(kapi_server, ns, work)

    def versions() -> tuple[str, str]:
        live = kapi_server.kubectl("get", "cm", "a", "-n", ns, "-o", "jsonpath={.metadata.resourceVersion}").stdout
        sync = kapi_server.kubectl("get", "sync", "app", "-n", ns,
                                   "-o", "jsonpath={.metadata.resourceVersion}").stdout
        return live, sync

    before = versions()
    work.git("checkout", "-q", "-b", "feature")
    work.write("a.yaml", {**cm, "data": {"v": "2"}})
    work.write("b.yaml", {**cm, "metadata": {"name": "Bad_Name"}})
    work.git("add", "-A")
    work.git("commit", "-q", "-m", "feature")
    done = work.git("push", "origin", "feature", check=False)
    assert done.returncode == 0, done.stderr  # a preview never refuses
    assert "remote: kapi: preview of branch feature" in done.stderr
    assert f"preview: Sync {ns}/app: ConfigMap {ns}/Bad_Name: metadata.name" in done.stderr

    work.remove("b.yaml")
    work.git("add", "-A")
    work.git("commit", "-q", "-m", "feature, fixed")
    done = work.git("push", "origin", "feature", check=False)
    assert done.returncode == 0, done.stderr
    plan = [line.split(f"preview: Sync {ns}/app: ", 1)[1].rstrip() for line in done.stderr.splitlines()
            if f"preview: Sync {ns}/app: " in line]
    assert plan[0] == "plan: 0 to create, 1 to change, 0 to prune, 0 unchanged"
    assert f"  ~ ConfigMap {ns}/a: data.v: 1 → 2" in plan
    assert versions() == before
    assert kapi_server.kubectl("get", "cm", "a", "-n", ns, "-o", "jsonpath={.data.v}").stdout == "1"
