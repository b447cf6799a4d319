"""The virtual resources: TokenReview, SelfSubjectReview, the access reviews and
TokenRequest (``serviceaccounts/NAME/token``). Each answers a create with the
request plus its ``status``; nothing is stored."""

from __future__ import annotations

from kapi import errors
from kapi.auth import access, rbac, serviceaccounts
from kapi.auth.attributes import Attributes
from kapi.auth.authenticator import authenticate_token
from kapi.auth.user import UserInfo
from kapi.errors import Cause
from kapi.handlers.scope import RequestScope, Result
from kapi.registry.store import Registry

__all__ = ["create", "token_request"]


def _user_dict(user: UserInfo) -> dict:
    out: dict = {"username": user.username, "groups": list(user.groups)}
    if user.uid:
        out["uid"] = user.uid
    if user.extra:
        out["extra"] = {k: list(v) for k, v in user.extra.items()}
    return out


def _body(scope: RequestScope, body) -> dict:
    if not isinstance(body, dict):
        raise errors.bad_request(
            "the body of the request must be a JSON or YAML object"
        )
    rt = scope.resource
    out = {k: v for k, v in body.items() if k != "status"}
    out["apiVersion"] = rt.api_version
    out["kind"] = rt.kind
    meta = dict(out.get("metadata") or {})
    meta["creationTimestamp"] = None
    if rt.namespaced:
        meta["namespace"] = scope.namespace
    out["metadata"] = meta
    out.setdefault("spec", {})
    return out


def _access(user: UserInfo, spec: dict, namespace: str | None, kind: str) -> dict:
    res = spec.get("resourceAttributes")
    non = spec.get("nonResourceAttributes")
    if res is None and non is None:
        raise errors.invalid(
            "authorization.k8s.io",
            kind,
            "",
            [
                Cause(
                    "FieldValueRequired",
                    "Required value: exactly one of nonResourceAttributes or "
                    "resourceAttributes must be specified",
                    "spec.resourceAttributes",
                )
            ],
        )
    if res is not None:
        ns = res.get("namespace", "") if namespace is None else namespace
        attrs = Attributes(
            user,
            res.get("verb", ""),
            True,
            ns,
            res.get("group", ""),
            res.get("version", ""),
            res.get("resource", ""),
            res.get("subresource", ""),
            res.get("name", ""),
        )
    else:
        attrs = Attributes(user, non.get("verb", ""), False, path=non.get("path", ""))
    if access.allowed(attrs):
        if "system:masters" in user.groups:
            return {"allowed": True}
        return {"allowed": True, "reason": rbac.authorize(attrs).reason}
    return {"allowed": False}


def _rules_review(user: UserInfo, spec: dict) -> dict:
    namespace = spec.get("namespace", "")
    resource_rules, non_resource_rules = [], []
    for rule in rbac.rules_for(user, namespace):
        if rule.get("nonResourceURLs"):
            non_resource_rules.append(
                {
                    "verbs": rule.get("verbs", []),
                    "nonResourceURLs": rule["nonResourceURLs"],
                }
            )
        else:
            r = {
                "verbs": rule.get("verbs", []),
                "apiGroups": rule.get("apiGroups", []),
                "resources": rule.get("resources", []),
            }
            if rule.get("resourceNames"):
                r["resourceNames"] = rule["resourceNames"]
            resource_rules.append(r)
    if "system:masters" in user.groups:
        resource_rules.insert(
            0, {"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}
        )
        non_resource_rules.insert(0, {"verbs": ["*"], "nonResourceURLs": ["*"]})
    return {
        "resourceRules": resource_rules,
        "nonResourceRules": non_resource_rules,
        "incomplete": False,
    }


def create(scope: RequestScope, body) -> Result:
    """Answer a create of one of the virtual review types."""
    kind = scope.resource.extra["virtual"]
    out = _body(scope, body)
    spec = out["spec"]
    user: UserInfo = scope.user
    if kind == "selfsubjectreviews":
        out["status"] = {"userInfo": _user_dict(user)}
    elif kind == "tokenreviews":
        token = spec.get("token", "")
        wanted = spec.get("audiences") or None
        found = authenticate_token(token, wanted) if token else None
        if found is None:
            out["status"] = {
                "authenticated": False,
                "user": {},
                "error": "invalid bearer token",
            }
        else:
            audiences = wanted or list(serviceaccounts.API_AUDIENCES)
            out["status"] = {
                "authenticated": True,
                "user": _user_dict(found),
                "audiences": audiences,
            }
    elif kind == "selfsubjectaccessreviews":
        out["status"] = _access(user, spec, None, "SelfSubjectAccessReview")
    elif kind in ("subjectaccessreviews", "localsubjectaccessreviews"):
        if not spec.get("user") and not spec.get("groups"):
            raise errors.invalid(
                "authorization.k8s.io",
                scope.resource.kind,
                "",
                [
                    Cause(
                        "FieldValueInvalid",
                        'Invalid value: "": at least one of user or group must be specified',
                        "spec.user",
                    )
                ],
            )
        subject = UserInfo(
            spec.get("user", ""),
            spec.get("uid", ""),
            tuple(spec.get("groups") or ()),
            {k: tuple(v) for k, v in (spec.get("extra") or {}).items()},
        )
        namespace = scope.namespace if kind == "localsubjectaccessreviews" else None
        out["status"] = _access(subject, spec, namespace, scope.resource.kind)
    elif kind == "selfsubjectrulesreviews":
        out["status"] = _rules_review(user, spec)
    else:
        raise errors.method_not_supported(
            scope.resource.group, scope.resource.plural, "create"
        )
    return Result(201, out, transformable=False)


def token_request(scope: RequestScope, registry: Registry, body) -> Result:
    """``POST serviceaccounts/NAME/token``: mint a ServiceAccount token."""
    return Result(
        201,
        serviceaccounts.create_token(registry, scope.namespace or "", scope.name, body),
        transformable=False,
    )
