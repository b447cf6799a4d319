"""The operator's reads (``kapi.storage.browse``), checked in process on the
real PostgreSQL storage: pages with a total in name and change order, both
ways and back; owners' dependents; the newest objects pointing at one; an
object's change log and its bodies at chosen versions."""

from __future__ import annotations

import uuid

from storage.conftest import GROUP

from kapi.selectors import parse_label_selector
from kapi.storage import browse
from kapi.storage.interface import Key


def _obj(
    name: str, namespace: str = "", labels: dict | None = None, **data
) -> dict:
    meta = {"name": name, "uid": str(uuid.uuid4())}
    if namespace:
        meta["namespace"] = namespace
    if labels:
        meta["labels"] = labels
    return {"apiVersion": f"{GROUP}/v1", "kind": "Widget", "metadata": meta, **data}


def _put(storage, resource: str, namespace: str, name: str, **more) -> dict:
    """Create object ``name`` (``more`` as in ``_obj``) in the resource."""
    obj = _obj(name, namespace, **more)
    return storage.create(Key(GROUP, resource, namespace, name), obj)


def _page(resource: str, **query) -> browse.BrowsePage:
    return browse.browse(browse.BrowseQuery(GROUP, resource, **query))


def _names(page: browse.BrowsePage) -> list[str]:
    return [row.object["metadata"]["name"] for row in page.rows]


def _walk(query: browse.BrowseQuery) -> list[list[str]]:
    """Every page from the first, following ``more`` and the last row's key."""
    pages, after = [], None
    while True:
        page = browse.browse(browse.BrowseQuery(**{**query.__dict__, "after": after}))
        pages.append(_names(page))
        if not page.more:
            return pages
        after = page.rows[-1].key


def test_pages_in_name_order_cover_the_collection_once_both_ways(
    storage, resource
) -> None:
    """Keyset pages by (namespace, name); descending reverses; a page read before
    a key is the one before it; ``total`` counts every match, ``more`` says
    whether rows lie beyond the page."""
    names = [f"w{i:02d}" for i in range(7)]
    for name in names:
        _put(storage, resource, "ns", name)
    query = browse.BrowseQuery(GROUP, resource, limit=3)
    assert _walk(query) == [names[0:3], names[3:6], names[6:7]]
    descending = browse.BrowseQuery(GROUP, resource, descending=True, limit=3)
    assert _walk(descending) == [names[6:3:-1], names[3:0:-1], names[0:1]]

    first = _page(resource, limit=3)
    assert first.total == 7 and first.more
    assert first.rows[0].key == ("ns", "w00")
    second = _page(resource, limit=3, after=first.rows[-1].key)
    back = _page(resource, limit=3, before=second.rows[0].key)
    assert _names(back) == names[0:3] and not back.more


def test_change_order_reads_by_resource_version_and_returns_stamped_objects(
    storage, resource
) -> None:
    """``updated`` orders by the last write: a rewritten object moves to the end;
    objects carry the resourceVersion of that write."""
    created = {n: _put(storage, resource, "", n) for n in ("a", "b", "c")}
    rv = int(created["a"]["metadata"]["resourceVersion"])
    changed = {**created["a"], "spec": {"v": 2}}
    updated = storage.update(Key(GROUP, resource, "", "a"), changed, rv)
    page = _page(resource, order="updated")
    assert _names(page) == ["b", "c", "a"]
    assert page.rows[-1].object == updated
    assert page.rows[-1].key == (int(updated["metadata"]["resourceVersion"]),)
    newest_first = _page(resource, order="updated", descending=True)
    assert _names(newest_first) == ["a", "c", "b"]


def test_filters_narrow_the_page_and_the_total_alike(storage, resource) -> None:
    """Namespace, a substring of the name and a label selector, together."""
    _put(storage, resource, "one", "web-a", labels={"tier": "front"})
    _put(storage, resource, "one", "web-b", labels={"tier": "back"})
    _put(storage, resource, "one", "db", labels={"tier": "front"})
    _put(storage, resource, "two", "web-c", labels={"tier": "front"})
    front = parse_label_selector("tier=front")
    page = _page(resource, namespace="one", search="web", labels=front)
    assert _names(page) == ["web-a"] and page.total == 1 and not page.more
    everywhere = _page(resource, search="web")
    assert _names(everywhere) == ["web-a", "web-b", "web-c"] and everywhere.total == 3


def test_dependents_are_the_owners_namespace_and_cluster_scoped_objects(
    storage, resource
) -> None:
    owner = str(uuid.uuid4())
    ref = {"apiVersion": "v1", "kind": "Widget", "name": "o", "uid": owner}
    refs = {"ownerReferences": [ref]}

    def put_owned(namespace: str, name: str) -> None:
        obj = _obj(name, namespace)
        obj["metadata"].update(refs)
        storage.create(Key(GROUP, resource, namespace, name), obj)

    put_owned("here", "child")
    put_owned("", "cluster-child")
    put_owned("elsewhere", "stray")
    _put(storage, resource, "here", "unrelated")
    found = browse.dependents(owner, "here")
    assert [(d.group, d.resource, d.namespace, d.name) for d in found] == [
        (GROUP, resource, "", "cluster-child"),
        (GROUP, resource, "here", "child"),
    ]
    assert found[1].metadata["ownerReferences"][0]["uid"] == owner


def test_newest_with_field_matches_one_field_newest_first(storage, resource) -> None:
    about = str(uuid.uuid4())
    for name, target in (("e1", about), ("e2", str(uuid.uuid4())), ("e3", about)):
        _put(storage, resource, "ns", name, involvedObject={"uid": target})
    path = ("involvedObject", "uid")
    found = browse.newest_with_field(GROUP, resource, "ns", path, about)
    assert [o["metadata"]["name"] for o in found] == ["e3", "e1"]
    assert all(o["metadata"]["resourceVersion"] for o in found)
    one = browse.newest_with_field(GROUP, resource, "ns", path, about, limit=1)
    assert one == found[:1]


def test_history_lists_every_write_and_changes_at_gives_their_bodies(
    storage, resource
) -> None:
    """Newest first, with the write's type; bodies at chosen versions only (one
    the log does not hold is absent); an object id that is no uid has none."""
    key = Key(GROUP, resource, "ns", "h")
    created = storage.create(key, _obj("h", "ns", spec={"v": 1}))
    rv1 = int(created["metadata"]["resourceVersion"])
    updated = storage.update(key, {**created, "spec": {"v": 2}}, rv1)
    rv2 = int(updated["metadata"]["resourceVersion"])
    deleted = storage.delete(key, rv2)
    rv3 = int(deleted["metadata"]["resourceVersion"])
    uid = created["metadata"]["uid"]

    entries = browse.history(uid)
    assert [(e.resource_version, e.type) for e in entries] == [
        (rv3, "DELETED"),
        (rv2, "MODIFIED"),
        (rv1, "ADDED"),
    ]
    assert all(e.data is None and e.created is not None for e in entries)
    assert [e.resource_version for e in browse.history(uid, limit=1)] == [rv3]

    bodies = browse.changes_at(uid, [rv1, rv2, rv3 + 1000])
    assert sorted(bodies) == [rv1, rv2]
    assert bodies[rv1].data["spec"] == {"v": 1} and bodies[rv2].data["spec"] == {"v": 2}
    assert browse.history("not-a-uid") == []
    assert browse.changes_at("not-a-uid", [rv1]) == {}
