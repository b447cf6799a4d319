"""What a request path addresses: kube-apiserver's ``RequestInfoFactory``.

``/api/v1/namespaces/ns/configmaps/name/status`` →
``RequestInfo(group="", version="v1", namespace="ns", resource="configmaps",
name="name", subresource="status")``. The verb comes from the HTTP method plus
whether a name is given (``list`` vs ``get``, ``deletecollection`` vs
``delete``) and ``?watch``.

A list or watch has no name in its path, but kube gives it one when its
``fieldSelector`` pins ``metadata.name`` (``name_from_field_selector``): so a
Role with ``resourceNames: [x]`` and ``list``/``watch`` allows
``GET .../configmaps?fieldSelector=metadata.name=x`` (what ``kubectl get cm x
-w`` sends), and nothing wider.
"""

from __future__ import annotations

from dataclasses import dataclass

from kapi.selectors.errors import SelectorError
from kapi.selectors.fields import parse_field_selector

__all__ = ["RequestInfo", "name_from_field_selector", "parse_request_path", "verb_for"]


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


class _AnyField(dict):
    """Every field is selectable: the request info reads the selector before
    the resource's own field labels are checked (kube parses it generically)."""

    def __contains__(self, key: object) -> bool:
        return True

    def __getitem__(self, key: str) -> str:
        return key


def name_from_field_selector(selector: str | None) -> str:
    """The name a list or watch addresses through its field selector, or "".

    kube's ``RequestInfoFactory``: when the selector requires
    ``metadata.name=X`` (``=`` or ``==``; ``!=`` does not count) the request
    info's name is X, so RBAC's ``resourceNames`` apply. A selector that does
    not parse, or an X that is not a valid path segment name (``.``, ``..``,
    containing ``/`` or ``%``), gives no name. The caller must pass the same
    ``fieldSelector`` value the handler filters by, so the name authorized is
    the only one listed.
    """
    if not selector:
        return ""
    try:
        parsed = parse_field_selector(selector, _AnyField())
    except SelectorError:
        return ""
    name = parsed.requires_exact("metadata.name") or ""
    if name in (".", "..") or "/" in name or "%" in name:
        return ""
    return name
