"""ServiceAccount tokens: TokenRequest minting and validation, as kube's
``pkg/serviceaccount`` (claims) and ``pkg/registry/core/serviceaccount/storage/token.go``.

A token is a JWT signed with the newest key of ``kapi.auth.signing``; its claims::

    iss  ISSUER            sub  system:serviceaccount:NS:NAME
    aud  [audiences]       exp, iat, nbf, jti
    kubernetes.io: {namespace, serviceaccount: {name, uid}, pod|secret|node: {name, uid}}

A token authenticates only while its ServiceAccount (and its bound object) still
exists with the same uid, so deleting either ends it at once.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

from kapi import errors
from kapi.auth import signing
from kapi.auth.user import UserInfo, service_account_user
from kapi.errors import Cause
from kapi.registry.catalog import catalog
from kapi.registry.store import Registry

__all__ = [
    "API_AUDIENCES",
    "DEFAULT_EXPIRATION_SECONDS",
    "ISSUER",
    "authenticate",
    "create_token",
   
]

ISSUER = "https://kubernetes.default.svc.cluster.local"
#: What the API server itself accepts (kube's ``--api-audiences``, default the issuer).
API_AUDIENCES = [ISSUER]
DEFAULT_EXPIRATION_SECONDS = 3600
MIN_EXPIRATION_SECONDS = 600
MAX_EXPIRATION_SECONDS = 1 << 32

_BOUND_KINDS = {
    "Pod": ("", "v1", "pods"),
    "Secret": ("", "v1", "secrets"),
    "Node": ("", "v1", "nodes"),
}


def _get(
    registry: Registry, group: str, version: str, plural: str, ns: str, name: str
) -> dict | None:
    rt = catalog().lookup(group, version, plural)
    try:
        return registry.get(rt, ns, name)
    except errors.StatusError as exc:
        if exc.code == 404:
            return None
        raise


def create_token(registry: Registry, namespace: str, name: str, body: Any) -> dict:
    """Answer a TokenRequest for ServiceAccount ``namespace/name`` (may raise
    ``StatusError``); returns the TokenRequest with ``status`` filled in."""
    if not isinstance(body, dict):
        raise errors.bad_request("the body of the request must be a TokenRequest")
    spec = body.get("spec") or {}
    sa = _get(registry, "", "v1", "serviceaccounts", namespace, name)
    if sa is None:
        raise errors.not_found("", "serviceaccounts", name)
    seconds = spec.get("expirationSeconds") or DEFAULT_EXPIRATION_SECONDS
    causes = []
    if not isinstance(seconds, int) or seconds < MIN_EXPIRATION_SECONDS:
        causes.append(
            Cause(
                "FieldValueInvalid",
                f"Invalid value: {seconds}: may not specify a duration less than 10 minutes",
                "spec.expirationSeconds",
            )
        )
    elif seconds > MAX_EXPIRATION_SECONDS:
        causes.append(
            Cause(
                "FieldValueTooLong",
                f"Invalid value: {seconds}: may not specify a duration larger than 2^32 seconds",
                "spec.expirationSeconds",
            )
        )
    audiences = spec.get("audiences") or list(API_AUDIENCES)
    private: dict[str, Any] = {
        "namespace": namespace,
        "serviceaccount": {"name": name, "uid": sa["metadata"]["uid"]},
    }
    ref = spec.get("boundObjectRef")
    if ref:
        kind = ref.get("kind", "")
        if kind not in _BOUND_KINDS:
            causes.append(
                Cause(
                    "FieldValueNotSupported",
                    f'Unsupported value: "{kind}": supported values: "Node", "Pod", "Secret"',
                    "spec.boundObjectRef.kind",
                )
            )
        else:
            group, version, plural = _BOUND_KINDS[kind]
            ns = "" if kind == "Node" else namespace
            bound = _get(registry, group, version, plural, ns, ref.get("name", ""))
            if bound is None:
                raise errors.not_found(group, plural, ref.get("name", ""))
            uid = bound["metadata"]["uid"]
            if ref.get("uid") and ref["uid"] != uid:
                raise errors.conflict(
                    group,
                    plural,
                    ref.get("name", ""),
                    f"the UID in the bound object reference ({ref['uid']}) does not match "
                    f"the UID in record. The object might have been deleted and then recreated",
                )
            private[kind.lower()] = {"name": ref["name"], "uid": uid}
    if causes:
        raise errors.invalid("authentication.k8s.io", "TokenRequest", name, causes)
    now = int(time.time())
    claims = {
        "aud": audiences,
        "exp": now + seconds,
        "iat": now,
        "iss": ISSUER,
        "jti": str(uuid.uuid4()),
        "kubernetes.io": private,
        "nbf": now,
        "sub": f"system:serviceaccount:{namespace}:{name}",
    }
    token = signing.encode(claims)
    expires = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now + seconds))
    return {
        "kind": "TokenRequest",
        "apiVersion": "authentication.k8s.io/v1",
        "metadata": {"name": name, "namespace": namespace, "creationTimestamp": None},
        "spec": {
            **spec,
            "audiences": audiences,
            "expirationSeconds": seconds,
            "boundObjectRef": spec.get("boundObjectRef"),
        },
        "status": {"token": token, "expirationTimestamp": expires},
    }


def authenticate(
    registry: Registry, token: str, audiences: list[str] | None = None
) -> tuple[UserInfo, list[str]] | None:
    """(user, audiences in common) for a valid, live ServiceAccount token."""
    wanted = audiences or API_AUDIENCES
    claims = signing.decode(token, wanted, ISSUER)
    if claims is None:
        return None
    private = claims.get("kubernetes.io") or {}
    namespace = private.get("namespace", "")
    sa_ref = private.get("serviceaccount") or {}
    if claims.get("sub") != f"system:serviceaccount:{namespace}:{sa_ref.get('name')}":
        return None
    sa = _get(registry, "", "v1", "serviceaccounts", namespace, sa_ref.get("name", ""))
    if sa is None or sa["metadata"].get("uid") != sa_ref.get("uid"):
        return None
    extra: dict[str, tuple[str, ...]] = {
        "authentication.kubernetes.io/credential-id": (f"JTI={claims.get('jti', '')}",)
    }
    for kind, (group, version, plural) in _BOUND_KINDS.items():
        ref = private.get(kind.lower())
        if not ref:
            continue
        ns = "" if kind == "Node" else namespace
        bound = _get(registry, group, version, plural, ns, ref.get("name", ""))
        if bound is None or bound["metadata"].get("uid") != ref.get("uid"):
            return None
        extra[f"authentication.kubernetes.io/{kind.lower()}-name"] = (ref["name"],)
        extra[f"authentication.kubernetes.io/{kind.lower()}-uid"] = (ref["uid"],)
    base = service_account_user(namespace, sa_ref["name"], sa_ref["uid"])
    aud = claims.get("aud")
    aud = [aud] if isinstance(aud, str) else list(aud or [])
    return UserInfo(base.username, base.uid, base.groups, extra), [
        a for a in aud if a in wanted
    ]
