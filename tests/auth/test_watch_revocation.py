"""A watch whose permission goes ends before it delivers anything newer.

One test per way a permission can go. Each opens watches as the restricted
caller on fresh connections until both API processes serve some (found by
which process holds each connection), sees an object created before the
revocation arrive on all of them, revokes (through whichever process kubectl
reaches), at once creates another object, and asserts that every watch ended
and none delivered it. Nothing waits for the revocation to "propagate": the
promise is that no event after it is delivered, on any process. (Retiring
the signing keys, which needs a server of its own, is in
test_signing_key_rotation.py.)
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import socket
import ssl
import subprocess
import sys
import threading
from collections.abc import Callable
from urllib.parse import urlencode, urlsplit

import psutil
from auth.conftest import eventually
from kapi_testserver import ROOT, KapiServer, server_processes

#: How many connections at most to open before both API processes serve one.
MAX_WATCHES = 48
BATCH = 6
#: Generous bound for a watch to end once its permission went (it ends at the
#: first event after the revocation; this only keeps a broken server from
#: hanging the test).
END_TIMEOUT = 30.0


class Watch:
    """One watch on its own connection, read by a thread."""

    def __init__(self, server: KapiServer, token: str, path: str, params: dict) -> None:
        split = urlsplit(server.url)
        context = ssl.create_default_context(cafile=str(server.ca_path))
        self.conn = http.client.HTTPSConnection(
            split.hostname, split.port, context=context, timeout=120
        )
        query = urlencode({"watch": "1", "timeoutSeconds": "90", **params})
        self.conn.request(
            "GET", f"{path}?{query}", headers={"Authorization": f"Bearer {token}"}
        )
        self.response = self.conn.getresponse()
        assert self.response.status == 200, self.response.read()
        self.port = self.conn.sock.getsockname()[1]
        self.events: list[dict] = []
        self.ended = threading.Event()
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        try:
            for line in self.response:
                if line.strip():
                    self.events.append(json.loads(line))
        except (OSError, http.client.HTTPException, ValueError, AttributeError):
            pass  # closed by the test (http.client then reads from None)
        finally:
            self.ended.set()

    def names(self, namespace: str) -> list[str]:
        """The names the watch delivered in ``namespace``: a cluster-wide watch
        also starts with every other namespace's objects, such as an earlier
        test's, whose namespace may still be being deleted."""
        return [
            e["object"]["metadata"].get("name", "")
            for e in list(self.events)
            if e["object"]["metadata"].get("namespace") == namespace
        ]

    def close(self) -> None:
        # Shut the socket down first: closing alone waits for the reader
        # thread's blocked read to return (the next event, or the watch's 90 s).
        if self.conn.sock is not None:
            with contextlib.suppress(OSError):
                self.conn.sock.shutdown(socket.SHUT_RDWR)
        self.conn.close()


def _worker_of(server: KapiServer, port: int) -> int | None:
    """The pid of the API process holding the server side of a connection."""
    server_port = urlsplit(server.url).port
    for proc in server_processes(server):
        try:
            conns = proc.net_connections(kind="tcp")
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
        for c in conns:
            if (
                c.laddr
                and c.raddr
                and c.laddr.port == server_port
                and c.raddr.port == port
            ):
                return proc.pid
    return None


def open_watches(
    server: KapiServer, token: str, path: str, params: dict | None = None
) -> list[Watch]:
    """Watches on fresh connections until two API processes serve them.

    Opened a few at a time, concurrently: one process busy with a TLS
    handshake leaves the next connection to the other."""
    watches: list[Watch] = []
    workers: set[int] = set()
    while len(workers) < 2:
        assert len(watches) < MAX_WATCHES, f"only processes {workers} took the watches"
        batch: list[Watch] = []
        threads = [
            threading.Thread(
                target=lambda out=batch: out.append(
                    Watch(server, token, path, params or {})
                )
            )
            for _ in range(BATCH)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(batch) == BATCH, "a watch could not be opened"
        watches += batch
        for watch in batch:
            worker = _worker_of(server, watch.port)
            if worker is not None:
                workers.add(worker)
    return watches


def revoked_run(
    server: KapiServer,
    token: str,
    ns: str,
    revoke: Callable[[], None],
    *,
    path: str | None = None,
) -> None:
    """Watch configmaps in ``ns`` as ``token``; see "before"; revoke; create
    "after" at once; every watch must end without delivering it."""
    k = server.kubectl
    watches = open_watches(server, token, path or f"/api/v1/namespaces/{ns}/configmaps")
    try:
        k("create", "configmap", "before", "-n", ns)
        eventually(lambda: all("before" in w.names(ns) for w in watches), timeout=30)
        revoke()
        # At once (no kubectl start-up): no time for any cache to age.
        assert _create_configmap(server, ns, "after") == 201
        for w in watches:
            assert w.ended.wait(END_TIMEOUT), (
                "a watch went on after its permission was revoked"
            )
        for w in watches:
            assert "after" not in w.names(ns), (
                "an event after the revocation was delivered"
            )
            assert all(e["type"] != "ERROR" for e in w.events), w.events
    finally:
        for w in watches:
            w.close()


def _connection(server: KapiServer) -> http.client.HTTPSConnection:
    split = urlsplit(server.url)
    context = ssl.create_default_context(cafile=str(server.ca_path))
    return http.client.HTTPSConnection(
        split.hostname, split.port, context=context, timeout=30
    )


def _create_configmap(server: KapiServer, ns: str, name: str) -> int:
    conn = _connection(server)
    body = json.dumps(
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}}
    )
    try:
        conn.request(
            "POST",
            f"/api/v1/namespaces/{ns}/configmaps",
            body=body,
            headers={
                "Authorization": f"Bearer {server.token}",
                "Content-Type": "application/json",
            },
        )
        response = conn.getresponse()
        response.read()
        return response.status
    finally:
        conn.close()


def _grant_role(server: KapiServer, ns: str, subject: str) -> None:
    k = server.kubectl
    k(
        "create",
        "role",
        "cm-watch",
        "--verb=get,list,watch",
        "--resource=configmaps",
        "-n",
        ns,
    )
    k("create", "rolebinding", "cm-watch", "--role=cm-watch", subject, "-n", ns)


def _list_ok(server: KapiServer, token: str, path: str) -> bool:
    split = urlsplit(server.url)
    context = ssl.create_default_context(cafile=str(server.ca_path))
    conn = http.client.HTTPSConnection(
        split.hostname, split.port, context=context, timeout=30
    )
    try:
        conn.request("GET", path, headers={"Authorization": f"Bearer {token}"})
        return conn.getresponse().status == 200
    finally:
        conn.close()


def _ready(server: KapiServer, token: str, ns: str) -> None:
    """The grant is in force on both processes (lists on fresh connections)."""
    path = f"/api/v1/namespaces/{ns}/configmaps"
    eventually(lambda: all(_list_ok(server, token, path) for _ in range(6)), timeout=15)


def _service_account_token(server: KapiServer, ns: str, name: str, *bound: str) -> str:
    server.kubectl("create", "serviceaccount", name, "-n", ns)
    return server.kubectl("create", "token", name, "-n", ns, *bound).stdout.strip()


def _shell(server: KapiServer, code: str) -> None:
    env = {**os.environ, "KAPI_DATA_DIR": str(server.data_dir)}
    subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), "shell", "-c", code],
        check=True,
        cwd=ROOT,
        env=env,
        capture_output=True,
        timeout=120,
    )


# -- RBAC ----------------------------------------------------------------------


def test_rolebinding_deleted(kapi_server: KapiServer, make_user, ns) -> None:
    user = make_user("rb-del")
    _grant_role(kapi_server, ns, f"--user={user.name}")
    _ready(kapi_server, user.token, ns)
    revoked_run(
        kapi_server,
        user.token,
        ns,
        lambda: kapi_server.kubectl("delete", "rolebinding", "cm-watch", "-n", ns),
    )


def test_rolebinding_subjects_edited(kapi_server: KapiServer, make_user, ns) -> None:
    user = make_user("rb-subj")
    _grant_role(kapi_server, ns, f"--user={user.name}")
    _ready(kapi_server, user.token, ns)
    patch = json.dumps(
        [
            {
                "op": "replace",
                "path": "/subjects",
                "value": [
                    {
                        "kind": "User",
                        "name": "someone-else",
                        "apiGroup": "rbac.authorization.k8s.io",
                    }
                ],
            }
        ]
    )
    revoked_run(
        kapi_server,
        user.token,
        ns,
        lambda: kapi_server.kubectl(
            "patch", "rolebinding", "cm-watch", "-n", ns, "--type=json", "-p", patch
        ),
    )


def test_rolebinding_role_ref_replaced(kapi_server: KapiServer, make_user, ns) -> None:
    """roleRef is immutable (as in kube): the binding is replaced by one to a
    Role without configmaps."""
    user = make_user("rb-ref")
    k = kapi_server.kubectl
    _grant_role(kapi_server, ns, f"--user={user.name}")
    k("create", "role", "secrets-only", "--verb=get", "--resource=secrets", "-n", ns)
    _ready(kapi_server, user.token, ns)
    refused = k(
        "patch",
        "rolebinding",
        "cm-watch",
        "-n",
        ns,
        "--type=merge",
        "-p",
        '{"roleRef":{"name":"secrets-only"}}',
        check=False,
    )
    assert refused.returncode != 0 and "roleRef" in refused.stderr, refused.stderr
    replacement = k(
        "create",
        "rolebinding",
        "cm-watch",
        "--role=secrets-only",
        f"--user={user.name}",
        "-n",
        ns,
        "--dry-run=client",
        "-o",
        "yaml",
    ).stdout
    revoked_run(
        kapi_server,
        user.token,
        ns,
        lambda: k("replace", "--force", "-f", "-", input=replacement),
    )


def test_clusterrolebinding_deleted(kapi_server: KapiServer, make_user, ns) -> None:
    user = make_user("crb-del")
    name = f"cm-watch-{user.name}"
    k = kapi_server.kubectl
    k("create", "clusterrole", name, "--verb=get,list,watch", "--resource=configmaps")
    k(
        "create",
        "clusterrolebinding",
        name,
        f"--clusterrole={name}",
        f"--user={user.name}",
    )
    try:
        _ready(kapi_server, user.token, ns)
        revoked_run(
            kapi_server, user.token, ns, lambda: k("delete", "clusterrolebinding", name)
        )
    finally:
        k("delete", "clusterrolebinding", name, "--ignore-not-found")
        k("delete", "clusterrole", name)


def test_clusterrolebinding_subjects_edited(
    kapi_server: KapiServer, make_user, ns
) -> None:
    """A cluster-wide grant: the watch is of every namespace's configmaps."""
    user = make_user("crb-subj")
    name = f"cm-watch-{user.name}"
    k = kapi_server.kubectl
    k("create", "clusterrole", name, "--verb=get,list,watch", "--resource=configmaps")
    k(
        "create",
        "clusterrolebinding",
        name,
        f"--clusterrole={name}",
        f"--user={user.name}",
    )
    patch = json.dumps(
        [{"op": "replace", "path": "/subjects/0/name", "value": "someone-else"}]
    )
    try:
        _ready(kapi_server, user.token, ns)
        revoked_run(
            kapi_server,
            user.token,
            ns,
            lambda: k("patch", "clusterrolebinding", name, "--type=json", "-p", patch),
            path="/api/v1/configmaps",
        )
    finally:
        k("delete", "clusterrolebinding", name)
        k("delete", "clusterrole", name)


def test_role_rules_edited(kapi_server: KapiServer, make_user, ns) -> None:
    user = make_user("role-rules")
    _grant_role(kapi_server, ns, f"--user={user.name}")
    _ready(kapi_server, user.token, ns)
    patch = json.dumps(
        [
            {
                "op": "replace",
                "path": "/rules",
                "value": [
                    {"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]}
                ],
            }
        ]
    )
    revoked_run(
        kapi_server,
        user.token,
        ns,
        lambda: kapi_server.kubectl(
            "patch", "role", "cm-watch", "-n", ns, "--type=json", "-p", patch
        ),
    )


def test_clusterrole_rules_edited(kapi_server: KapiServer, make_user, ns) -> None:
    """A RoleBinding to a ClusterRole whose rules lose configmaps."""
    user = make_user("cr-rules")
    name = f"cm-watch-{user.name}"
    k = kapi_server.kubectl
    k("create", "clusterrole", name, "--verb=get,list,watch", "--resource=configmaps")
    k(
        "create",
        "rolebinding",
        "cm-watch",
        f"--clusterrole={name}",
        f"--user={user.name}",
        "-n",
        ns,
    )
    patch = json.dumps(
        [{"op": "replace", "path": "/rules/0/resources", "value": ["secrets"]}]
    )
    try:
        _ready(kapi_server, user.token, ns)
        revoked_run(
            kapi_server,
            user.token,
            ns,
            lambda: k("patch", "clusterrole", name, "--type=json", "-p", patch),
        )
    finally:
        k("delete", "clusterrole", name)


def test_clusterrole_aggregation_shrinks(
    kapi_server: KapiServer, make_user, ns
) -> None:
    """The aggregated ClusterRole loses the rules of a ClusterRole that stops
    matching its selector; events after its rules shrank are not delivered."""
    user = make_user("agg")
    label = f"kapi.test/agg-{user.name}"
    aggregate, piece = f"agg-{user.name}", f"piece-{user.name}"
    k = kapi_server.kubectl
    k(
        "apply",
        "-f",
        "-",
        input=json.dumps(
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "ClusterRole",
                "metadata": {"name": aggregate},
                "aggregationRule": {
                    "clusterRoleSelectors": [{"matchLabels": {label: "true"}}]
                },
            }
        ),
    )
    k("create", "clusterrole", piece, "--verb=get,list,watch", "--resource=configmaps")
    k("label", "clusterrole", piece, f"{label}=true")
    k(
        "create",
        "rolebinding",
        "cm-watch",
        f"--clusterrole={aggregate}",
        f"--user={user.name}",
        "-n",
        ns,
    )

    def aggregated_rules() -> list:
        return (
            json.loads(k("get", "clusterrole", aggregate, "-o", "json").stdout).get(
                "rules"
            )
            or []
        )

    def revoke() -> None:
        k("label", "clusterrole", piece, f"{label}-")
        eventually(lambda: aggregated_rules() == [], timeout=30)

    try:
        eventually(lambda: aggregated_rules() != [], timeout=30)
        _ready(kapi_server, user.token, ns)
        revoked_run(kapi_server, user.token, ns, revoke)
    finally:
        k("delete", "clusterrole", aggregate, piece)


# -- the static token file ---------------------------------------------------


def test_token_file_line_removed(kapi_server: KapiServer, ns) -> None:
    """A static token whose line leaves the token file: its watches end, though
    each API process accepts a token it knows without reading the file for a
    moment (the re-check reads it at once)."""
    from kapi.runtime.tokens import ensure_user_token

    path = kapi_server.data_dir / "tokens.csv"
    name = f"static-{ns}"
    token = ensure_user_token(name, path=path)
    _grant_role(kapi_server, ns, f"--user={name}")
    _ready(kapi_server, token, ns)

    def remove_line() -> None:
        kept = [
            line
            for line in path.read_text().splitlines(keepends=True)
            if not line.startswith(token + ",")
        ]
        tmp = path.with_name(".tokens.csv.test")
        tmp.write_text("".join(kept))
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)

    revoked_run(kapi_server, token, ns, remove_line)
    eventually(lambda: not _list_ok(kapi_server, token, f"/api/v1/namespaces/{ns}/configmaps"))


# -- ServiceAccounts and their tokens ----------------------------------------


def test_serviceaccount_deleted(kapi_server: KapiServer, ns) -> None:
    token = _service_account_token(kapi_server, ns, "watcher")
    _grant_role(kapi_server, ns, f"--serviceaccount={ns}:watcher")
    _ready(kapi_server, token, ns)
    revoked_run(
        kapi_server,
        token,
        ns,
        lambda: kapi_server.kubectl("delete", "serviceaccount", "watcher", "-n", ns),
    )


def test_bound_token_object_deleted(kapi_server: KapiServer, ns) -> None:
    """A token bound to a Secret ends with the Secret (the account stays)."""
    kapi_server.kubectl("create", "secret", "generic", "binding", "-n", ns)
    token = _service_account_token(
        kapi_server,
        ns,
        "watcher",
        "--bound-object-kind=Secret",
        "--bound-object-name=binding",
    )
    _grant_role(kapi_server, ns, f"--serviceaccount={ns}:watcher")
    _ready(kapi_server, token, ns)
    revoked_run(
        kapi_server,
        token,
        ns,
        lambda: kapi_server.kubectl("delete", "secret", "binding", "-n", ns),
    )
    # The account itself still has its rights: a fresh token still watches.
    fresh = kapi_server.kubectl("create", "token", "watcher", "-n", ns).stdout.strip()
    assert _list_ok(kapi_server, fresh, f"/api/v1/namespaces/{ns}/configmaps")


# -- Django users ------------------------------------------------------------


def _django(name: str, action: str) -> str:
    return (
        "from django.contrib.auth.models import Group, User;"
        f"u = User.objects.get(username={name!r});"
        f"g, _ = Group.objects.get_or_create(name={name + '-team'!r});" + action
    )


def test_django_user_deactivated(kapi_server: KapiServer, make_user, ns) -> None:
    user = make_user("dj-off")
    _grant_role(kapi_server, ns, f"--user={user.name}")
    _ready(kapi_server, user.token, ns)
    revoked_run(
        kapi_server,
        user.token,
        ns,
        lambda: _shell(
            kapi_server, _django(user.name, "u.is_active = False; u.save()")
        ),
    )


def test_django_user_deleted(kapi_server: KapiServer, make_user, ns) -> None:
    user = make_user("dj-del")
    _grant_role(kapi_server, ns, f"--user={user.name}")
    _ready(kapi_server, user.token, ns)
    revoked_run(
        kapi_server,
        user.token,
        ns,
        lambda: _shell(kapi_server, _django(user.name, "u.delete()")),
    )


def test_django_user_regrouped(kapi_server: KapiServer, make_user, ns) -> None:
    """The right comes from a group binding; the user leaves the group."""
    user = make_user("dj-grp")
    _shell(kapi_server, _django(user.name, "u.groups.add(g)"))
    _grant_role(kapi_server, ns, f"--group={user.name}-team")
    _ready(kapi_server, user.token, ns)
    revoked_run(
        kapi_server,
        user.token,
        ns,
        lambda: _shell(kapi_server, _django(user.name, "u.groups.remove(g)")),
    )


# -- what must not end a watch -------------------------------------------------


def test_unrelated_rbac_change_keeps_the_watch(
    kapi_server: KapiServer, make_user, ns
) -> None:
    """An RBAC change that leaves the caller's rights (another user's binding)
    re-checks the watch but does not end it: later events still arrive."""
    user = make_user("keeps")
    k = kapi_server.kubectl
    _grant_role(kapi_server, ns, f"--user={user.name}")
    _ready(kapi_server, user.token, ns)
    watches = open_watches(
        kapi_server, user.token, f"/api/v1/namespaces/{ns}/configmaps"
    )
    try:
        k(
            "create",
            "rolebinding",
            "other",
            "--role=cm-watch",
            "--user=somebody",
            "-n",
            ns,
        )
        k("delete", "serviceaccount", "default", "-n", ns, "--ignore-not-found")
        k("create", "configmap", "after", "-n", ns)
        eventually(lambda: all("after" in w.names(ns) for w in watches), timeout=30)
        assert not any(w.ended.is_set() for w in watches)
    finally:
        for w in watches:
            w.close()
