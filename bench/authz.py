"""Authorization cost per request with N RoleBindings present.

Creates N RoleBindings (spread over 50 namespaces, each binding `view` to its
own user; one more binds the measured user) through the registry of the kapi
whose data directory is KAPI_DATA_DIR, then times ``access.allowed`` for an
allowed and a denied request: with the index warm (pure lookup) and including
the per-request freshness check (one indexed SQL query every 0.25 s). Then
the authentication cost per request of a non-admin Django user's token (JWT
verification and the user's groups) next to the admin static token.

    KAPI_DATA_DIR=/path/to/data python bench/authz.py [--bindings 1000]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kapi.settings")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--bindings", type=int, default=1000)
    parser.add_argument("--calls", type=int, default=20000)
    args = parser.parse_args()
    import django

    django.setup()
    from kapi.auth import access, rbac
    from kapi.auth.attributes import Attributes
    from kapi.auth.user import UserInfo
    from kapi.errors import StatusError
    from kapi.registry.catalog import catalog
    from kapi.registry.store import Registry

    reg, cat = Registry(), catalog()
    ns_rt = cat.lookup("", "v1", "namespaces")
    rb_rt = cat.lookup("rbac.authorization.k8s.io", "v1", "rolebindings")
    spaces = [f"authz-{i}" for i in range(50)]
    for ns in spaces:
        try:
            reg.create(ns_rt, "", {"metadata": {"name": ns}})
        except StatusError:
            pass
    for i in range(args.bindings):
        ns = spaces[i % len(spaces)]
        body = {
            "metadata": {"name": f"rb-{i}"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": f"user-{i}"}],
        }
        try:
            reg.create(rb_rt, ns, body)
        except StatusError:
            pass
    user = UserInfo("user-7", "", ("system:authenticated",))
    ok = Attributes(user, "list", True, spaces[7], "", "v1", "configmaps")
    no = Attributes(user, "list", True, spaces[8], "", "v1", "configmaps")
    rbac.invalidate()
    start = time.perf_counter()
    policy = rbac.index()
    print(f"index build with {args.bindings} RoleBindings: {(time.perf_counter() - start) * 1000:.1f} ms")
    assert access.allowed(ok) and not access.allowed(no)
    for label, attrs in (("allowed", ok), ("denied", no)):
        start = time.perf_counter()
        for _ in range(args.calls):
            rbac.authorize(attrs, policy)
        pure = (time.perf_counter() - start) / args.calls * 1e6
        start = time.perf_counter()
        n = 2000
        for _ in range(n):
            rbac.invalidate()
            access.allowed(attrs)
        fresh = (time.perf_counter() - start) / n * 1e6
        print(f"{label}: {pure:.1f} µs warm lookup, {fresh:.1f} µs with the freshness query")
    authentication(args.calls // 10)


def authentication(calls: int) -> None:
    """µs per ``authenticate_token``: the admin static token and a Django user's."""
    from kapi.auth import djangousers
    from kapi.auth.authenticator import authenticate_token
    from kapi.runtime import tokens

    static = tokens.ensure_token_file()
    user_token = djangousers.mint_token(djangousers.ensure_user("bench-authn"))
    for label, token in (("admin static token", static), ("Django user token", user_token)):
        assert authenticate_token(token) is not None
        start = time.perf_counter()
        for _ in range(calls):
            authenticate_token(token)
        print(f"authenticate, {label}: {(time.perf_counter() - start) / calls * 1e6:.1f} µs")


if __name__ == "__main__":
    main()
