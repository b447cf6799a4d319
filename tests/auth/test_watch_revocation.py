"""A watch whose permission is revoked ends, and sends nothing more."""

from __future__ import annotations

import json
import threading
import time

import requests

from tests.auth.conftest import eventually


def test_revoked_watch_ends_without_further_events(kapi_server, make_user, ns):
    user = make_user("watcher")
    k = kapi_server.kubectl
    k("create", "role", "cm-watch", "--verb=get,list,watch", "--resource=configmaps", "-n", ns)
    k("create", "rolebinding", "cm-watch", "--role=cm-watch", f"--user={user.name}", "-n", ns)
    eventually(lambda: user.can_i("watch", "configmaps", "-n", ns))

    session = requests.Session()
    session.trust_env = False
    response = session.get(
        f"{kapi_server.url}/api/v1/namespaces/{ns}/configmaps",
        params={"watch": "1", "timeoutSeconds": "60"},
        headers={"Authorization": f"Bearer {user.token}"},
        verify=str(kapi_server.ca_path),
        stream=True,
        timeout=90,
    )
    assert response.status_code == 200
    names: list[str] = []
    ended = threading.Event()

    def read() -> None:
        for line in response.iter_lines():
            if line:
                event = json.loads(line)
                names.append(event["object"]["metadata"].get("name", ""))
        ended.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    k("create", "configmap", "before", "-n", ns)
    eventually(lambda: "before" in names)

    k("delete", "rolebinding", "cm-watch", "-n", ns)
    eventually(lambda: not user.can_i("watch", "configmaps", "-n", ns))
    time.sleep(1.2)  # past the watch's permission re-check interval
    k("create", "configmap", "after", "-n", ns)
    assert ended.wait(20), "the watch did not end after its permission was revoked"
    assert "after" not in names
    assert "before" in names
