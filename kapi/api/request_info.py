"""What a request path addresses: kube-apiserver's ``RequestInfoFactory``.

``/api/v1/namespaces/ns/configmaps/name/status`` →
``RequestInfo(group="", version="v1", namespace="ns", resource="configmaps",
name="name", subresource="status")``. The verb comes from the HTTP method plus
whether a name is given (``list`` vs ``get``, ``deletecollection`` vs
``delete``) and ``?watch``.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["RequestInfo", "parse_request_path", "verb_for"]


@dataclass(frozen=True)
class RequestInfo:
    group: str
    version: str
    resource: str
    namespace: str | None = None
    name: str = ""
    subresource: str = ""

    @property
    def all_namespaces(self) -> bool:
        return self.namespace is None


#: Subresources of namespaces, addressed as /api/v1/namespaces/NAME/SUB.
_NAMESPACE_SUBRESOURCES = ("status", "finalize")


def parse_request_path(path: str) -> RequestInfo | None:
    """Parse a resource path; None when it is not one (discovery, unknown)."""
    parts = [p for p in path.split("/") if p != ""]
    if not parts:
        return None
    if parts[0] == "api":
        if len(parts) < 3:
            return None
        group, version, rest = "", parts[1], parts[2:]
    elif parts[0] == "apis":
        if len(parts) < 4:
            return None
        group, version, rest = parts[1], parts[2], parts[3:]
    else:
        return None

    namespace: str | None = None
    if rest[0] == "namespaces" and len(rest) >= 3 and not (
        len(rest) == 3 and rest[2] in _NAMESPACE_SUBRESOURCES
    ):
        namespace = rest[1]
        rest = rest[2:]
    if len(rest) > 3:
        return None
    resource = rest[0]
    name = rest[1] if len(rest) > 1 else ""
    subresource = rest[2] if len(rest) > 2 else ""
    return RequestInfo(group, version, resource, namespace, name, subresource)


def verb_for(method: str, info: RequestInfo, watch: bool) -> str:
    method = method.upper()
    if method in ("GET", "HEAD"):
        if watch:
            return "watch"
        return "get" if info.name else "list"
    if method == "POST":
        return "create"
    if method == "PUT":
        return "update"
    if method == "PATCH":
        return "patch"
    if method == "DELETE":
        return "delete" if info.name else "deletecollection"
    return method.lower()
