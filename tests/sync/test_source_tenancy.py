"""Sources stay in their tenant (``sync.localsource``): a GitRepository of one
namespace cannot read another namespace's hosted repository, or its mirror of
a private remote, through a ``file://`` URL, directly or through a symlink; it
ends Ready=False, Stalled, reason AccessDenied, with a message saying why, and
its Sync applies nothing. ``file://`` URLs are allowed only under the
directories an administrator lists (``KAPI_SYNC_FILE_URL_ROOTS``; the test
server lists the temporary directory, which holds its data directory too)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sync_gitops import Work, create, unique, wait_for

from sync import localsource

API = "sync.kapi.dev/v1"


def _repo(server, ns: str, name: str) -> dict:
    return json.loads(server.kubectl("get", "gitrepository", name, "-n", ns, "-o", "json").stdout)


def _conditions(obj: dict) -> dict[str, dict]:
    return {c["type"]: c for c in (obj.get("status") or {}).get("conditions") or []}


def test_a_tenant_cannot_read_another_tenants_repository_by_file_url(kapi_server, tmp_path):
    victim, thief = unique("victim"), unique("thief")
    create(kapi_server,
           {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": victim}},
           {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": thief}},
           {"apiVersion": API, "kind": "GitRepository", "metadata": {"name": "private", "namespace": victim},
            "spec": {"validateOnPush": False}})
    work = Work(kapi_server, victim, "private", tmp_path / "victim")
    work.write("secret.yaml", {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "db"},
                               "stringData": {"password": "hunter2"}})
    work.push("the victim's secrets")
    hosted = kapi_server.data_dir / "git" / victim / "private.git"
    assert (hosted / "HEAD").is_file()
    mirror = kapi_server.data_dir / "sync" / "mirrors" / victim / "private.git"
    link = tmp_path / "innocent.git"
    link.symlink_to(hosted)

    urls = {"hosted": f"file://{hosted}", "mirror": f"file://{mirror}", "symlink": f"file://{link}",
            "dotdot": f"file://{tmp_path}{'/..' * 12}{hosted}"}
    docs = []
    for name, url in urls.items():
        docs += [{"apiVersion": API, "kind": "GitRepository", "metadata": {"name": name, "namespace": thief},
                  "spec": {"url": url, "interval": "1h"}},
                 {"apiVersion": API, "kind": "Sync", "metadata": {"name": name, "namespace": thief},
                  "spec": {"sourceRef": {"name": name}}}]
    create(kapi_server, *docs)

    for name in urls:
        def refused(name=name):
            ready = _conditions(_repo(kapi_server, thief, name)).get("Ready", {})
            return ready if ready.get("reason") == "AccessDenied" else None

        ready = wait_for(refused, timeout=30, what=f"GitRepository {name} to be refused")
        assert ready["status"] == "False"
        assert "inside kapi's data directory" in ready["message"], ready
        repo = _repo(kapi_server, thief, name)
        assert _conditions(repo)["Stalled"]["status"] == "True"
        assert "artifact" not in repo["status"]
    assert not (kapi_server.data_dir / "sync" / "mirrors" / thief).exists()  # nothing was fetched
    done = kapi_server.kubectl("get", "secret", "db", "-n", thief, check=False)
    assert done.returncode != 0 and "NotFound" in done.stderr


def test_file_urls_need_a_listed_root(monkeypatch, tmp_path):
    """None are allowed by default; a listed root allows its repositories, never
    one of kapi's data directory inside it."""
    data = tmp_path / "data"
    (data / "git" / "ns" / "r.git").mkdir(parents=True)
    (tmp_path / "repos" / "app.git").mkdir(parents=True)
    monkeypatch.setenv("KAPI_DATA_DIR", str(data))
    monkeypatch.setattr(localsource, "allowed_roots", lambda: [])
    with pytest.raises(localsource.SourceRefused, match=r"not under a directory allowed .*KAPI_SYNC_FILE_URL_ROOTS: none"):
        localsource.check_url(f"file://{tmp_path}/repos/app.git")
    monkeypatch.setattr(localsource, "allowed_roots", lambda: [tmp_path.resolve()])
    localsource.check_url(f"file://{tmp_path}/repos/app.git")
    with pytest.raises(localsource.SourceRefused, match="inside kapi's data directory"):
        localsource.check_url(f"file://{data}/git/ns/r.git")
    for bad in (f"file://otherhost{tmp_path}/repos/app.git", "file://relative/path",
                f"file://{tmp_path}/repos/%2e%2e/app.git"):
        with pytest.raises(localsource.SourceRefused, match="must be file:///absolute/path"):
            localsource.check_url(bad)
    # git follows a work tree's .git file and a repository's alternates: so do the checks.
    work = tmp_path / "repos" / "work"
    work.mkdir()
    (work / ".git").write_text(f"gitdir: {data}/git/ns/r.git\n")
    with pytest.raises(localsource.SourceRefused, match=r"\(.git file\) is inside kapi's data directory"):
        localsource.check_url(f"file://{work}")
    alt = tmp_path / "repos" / "alt.git" / "objects" / "info"
    alt.mkdir(parents=True)
    (alt / "alternates").write_text(f"{data}/git/ns/r.git/objects\n")
    with pytest.raises(localsource.SourceRefused, match="alternates"):
        localsource.check_url(f"file://{Path(tmp_path) / 'repos' / 'alt.git'}")


def test_a_sync_cannot_name_another_namespaces_repository(kapi_server):
    """``spec.sourceRef.namespace`` of another namespace is refused at once (422,
    kube's Invalid naming the field), as Flux's --no-cross-namespace-refs; the
    Sync's own namespace is accepted."""
    ns = unique("xref")
    create(kapi_server, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    sync = {"apiVersion": API, "kind": "Sync", "metadata": {"name": "x", "namespace": ns},
            "spec": {"sourceRef": {"name": "private", "namespace": "kube-system"}}}
    done = kapi_server.kubectl("apply", "-f", "-", input=json.dumps(sync), check=False)
    assert done.returncode != 0
    assert "spec.sourceRef.namespace: Forbidden: cross-namespace references are not allowed" in done.stderr
    sync["spec"]["sourceRef"]["namespace"] = ns
    kapi_server.kubectl("apply", "-f", "-", input=json.dumps(sync))
