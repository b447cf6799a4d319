"""Live pages: whether anything a page shows may have changed since it was
rendered, for the page's script to fetch it again and swap in what moved.

A live page marks its changing part ``<div id="live" data-live-rv=...
data-live-namespaces=... data-live-resources=...>``: the change log's newest
version when it was rendered (read before the page's objects, so nothing is
missed), the namespaces it shows objects of, and collections (``group/resource``)
whose every change matters wherever it is (the home: any Sync). ``live/?since=
<rv>&ns=a&res=sync.kapi.dev/syncs`` answers ``{"rv": newest, "changed": bool}``
from one range read of the change log (``gitopsreads.changes_since``): a
light poll of the log watches are served from, telling only that the page
is stale, never an object. The script (``base.html``) polls every two seconds
while the page is visible.
"""

from __future__ import annotations

from django.http import JsonResponse

from kapi.storage import gitopsreads

__all__ = ["live", "live_context"]


def live_context(namespaces, resources=()) -> dict:
    """What a live page renders into its ``#live`` element (call before reading
    the page's objects)."""
    rv, _changed, _more = gitopsreads.changes_since(0)
    return {"live_rv": rv, "live_namespaces": " ".join(sorted(set(namespaces))),
            "live_resources": " ".join(resources)}


def live(request):
    try:
        since = int(request.GET.get("since", ""))
    except ValueError:
        since = 0
    wanted = {ns for ns in request.GET.getlist("ns") if ns}
    resources = {tuple(r.rsplit("/", 1)) for r in request.GET.getlist("res") if "/" in r}
    rv, changed, more = gitopsreads.changes_since(since)
    stale = since > 0 and (more or any(
        ns in wanted or (group, resource) in resources for group, resource, ns in changed))
    response = JsonResponse({"rv": rv, "changed": stale})
    response["Cache-Control"] = "no-store"
    return response
