"""Provider and Alert (Flux's notification shape): a Sync's failure and its
recovery reach a local receiver as Flux's generic event JSON and as a
Slack-compatible message; addresses only the server could reach are refused."""

from __future__ import annotations

import base64
import json
import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import django
from sync_gitops import Work, create, sync_namespace, unique, wait_for

API = "sync.kapi.dev/v1"


class _Receiver(BaseHTTPRequestHandler):
    bodies: list[tuple[str, dict]] = []

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        length = int(self.headers.get("Content-Length") or 0)
        self.bodies.append((self.path, json.loads(self.rfile.read(length))))
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args) -> None:
        pass


def _secret(ns: str, name: str, url: str) -> dict:
    return {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name, "namespace": ns},
            "data": {"address": base64.b64encode(url.encode()).decode()}}


def test_failure_and_recovery_reach_generic_and_slack_receivers(kapi_server, tmp_path):
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Receiver)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    ns = unique("alerts")
    try:
        create(kapi_server, *sync_namespace(ns),
               _secret(ns, "hook", f"{base}/generic/{ns}"), _secret(ns, "slack", f"{base}/slack/{ns}"),
               {"apiVersion": API, "kind": "Provider", "metadata": {"name": "hook", "namespace": ns},
                "spec": {"type": "generic", "secretRef": {"name": "hook"}}},
               {"apiVersion": API, "kind": "Provider", "metadata": {"name": "slack", "namespace": ns},
                "spec": {"type": "slack", "secretRef": {"name": "slack"}, "channel": "#deploys"}},
               {"apiVersion": API, "kind": "Alert", "metadata": {"name": "all", "namespace": ns},
                "spec": {"providerRef": {"name": "hook"}, "eventSources": [{"kind": "Sync", "name": "*"}]}},
               {"apiVersion": API, "kind": "Alert", "metadata": {"name": "errors", "namespace": ns},
                "spec": {"providerRef": {"name": "slack"}, "eventSeverity": "error",
                         "eventSources": [{"kind": "Sync", "name": "app"}]}},
               {"apiVersion": API, "kind": "GitRepository", "metadata": {"name": "app", "namespace": ns},
                "spec": {"validateOnPush": False}},
               {"apiVersion": API, "kind": "Sync", "metadata": {"name": "app", "namespace": ns},
                "spec": {"sourceRef": {"name": "app"}}})
        work = Work(kapi_server, ns, "app", tmp_path / ns)
        work.write("bad.yaml", {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "Not_Valid"}})
        work.push("bad")

        def received(prefix: str, predicate):
            return [b for p, b in _Receiver.bodies if p == f"{prefix}/{ns}" and predicate(b)]

        failure = wait_for(lambda: received("/generic", lambda b: b["reason"] == "ValidationFailed"),
                           what="the failure at the generic receiver")[0]
        assert failure["involvedObject"] == {**failure["involvedObject"], "kind": "Sync", "namespace": ns,
                                             "name": "app"}
        assert failure["severity"] == "error" and "Not_Valid" in failure["message"]
        assert failure["reportingController"] == "kapi-sync"
        slack = wait_for(lambda: received("/slack", lambda b: b["attachments"][0]["title"] == "ValidationFailed"),
                         what="the failure at the slack receiver")[0]
        assert slack["channel"] == "#deploys" and slack["attachments"][0]["color"] == "danger"

        work.remove("bad.yaml")
        work.write("good.yaml", {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "good"}})
        work.push("fixed")
        recovery = wait_for(lambda: received("/generic", lambda b: b["reason"] == "ReconciliationSucceeded"),
                            what="the recovery at the generic receiver")[0]
        assert recovery["severity"] == "info" and recovery["metadata"]["revision"].startswith("main@sha1:")
        # eventSeverity: error sends no recoveries.
        assert all(b["attachments"][0]["color"] == "danger" for b in received("/slack", lambda b: True))
    finally:
        server.shutdown()


def test_addresses_only_the_server_could_reach_are_refused():
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kapi.settings")
    django.setup()
    from django.test import override_settings

    from sync.notify import destination_allowed

    with override_settings(KAPI_ALERT_ALLOWED_NETWORKS=""):
        assert "may not reach" in destination_allowed("http://127.0.0.1:6443/api")
        assert "may not reach" in destination_allowed("http://169.254.169.254/latest/meta-data/")
        assert "may not reach" in destination_allowed("http://[::1]:80/")
        assert "http or https" in destination_allowed("file:///etc/passwd")
        assert "http or https" in destination_allowed("gopher://example.com/")
        assert destination_allowed("http://192.0.2.10/hook") is None  # TEST-NET: reachable networks pass
    with override_settings(KAPI_ALERT_ALLOWED_NETWORKS="127.0.0.0/8"):
        assert destination_allowed("http://127.0.0.1:6443/api") is None
