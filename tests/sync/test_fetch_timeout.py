"""GitRepository ``spec.timeout`` bounds the fetch: a remote that accepts the
connection and never answers ends as a condition, not a worker stuck for git's
own (much longer) timeouts."""

from __future__ import annotations

import json

from sync_gitops import create, silent_server, unique, wait_for

API = "sync.kapi.dev/v1"


def test_fetch_is_bounded_by_spec_timeout(kapi_server):
    listener, port = silent_server()
    try:
        ns = unique("fetchto")
        create(kapi_server,
               {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}},
               {"apiVersion": API, "kind": "GitRepository", "metadata": {"name": "slow", "namespace": ns},
                "spec": {"url": f"https://127.0.0.1:{port}/repo.git", "timeout": "2s", "interval": "1h"}})

        def failed():
            done = kapi_server.kubectl("get", "gitrepository", "slow", "-n", ns, "-o", "json")
            conds = {c["type"]: c for c in (json.loads(done.stdout).get("status") or {}).get("conditions") or []}
            return conds if conds.get("Ready", {}).get("status") == "False" else None

        conds = wait_for(failed, timeout=30, what="the fetch to time out")
        assert conds["Ready"]["reason"] == "GitOperationFailed"
        assert "timed out after 2s" in conds["Ready"]["message"]
        assert "Reconciling" not in conds and "Stalled" not in conds
    finally:
        listener.close()
