"""The ``Storage`` contract (kapi.storage.interface), checked in process.

What the registry, the watch and the lists rely on, as kube-apiserver's
``storage/testing`` suite states it for etcd: every write gets a new, larger
``resourceVersion`` from one sequence; compare-and-swap on it is the only
concurrency control; a list is one consistent snapshot, also of the past
(``at_revision``) until that past is compacted; pages and filters never skip
or repeat an object; a change feed reads each change after its durable cursor
once, in version order, and says when the history went past it.
"""

from __future__ import annotations

import copy
import uuid

import pytest
from storage.conftest import GROUP
from storage.conftest import revision as _rv
from storage.conftest import widget as _obj

from kapi.storage.errors import (
    KeyExists,
    KeyNotFound,
    NamespaceTerminating,
    ResourceVersionConflict,
    ResourceVersionExpired,
)
from kapi.storage.interface import Key, ListQuery, Preconditions


def _names(page) -> list[str]:
    return [o["metadata"]["name"] for o in page.items]


def test_create_then_get(storage, resource) -> None:
    key = Key(GROUP, resource, "ns", "a")
    given = _obj("a", "ns", spec={"size": 1})
    kept = copy.deepcopy(given)
    created = storage.create(key, given)
    assert given == kept, "create does not change its argument"
    assert _rv(created) > 0 and created["spec"] == {"size": 1}
    assert storage.get(key) == created


def test_create_of_a_taken_name_is_refused(storage, resource) -> None:
    key = Key(GROUP, resource, "ns", "a")
    first = storage.create(key, _obj("a", "ns", spec={"v": 1}))
    with pytest.raises(KeyExists):
        storage.create(key, _obj("a", "ns", spec={"v": 2}))
    assert storage.get(key) == first


def test_create_in_a_namespace_needs_it_to_exist_and_not_be_terminating(storage, resource) -> None:
    spaces = f"{resource}-namespaces"
    live, ending = Key(GROUP, spaces, "", "live"), Key(GROUP, spaces, "", "ending")
    storage.create(live, _obj("live", status={"phase": "Active"}))
    storage.create(ending, _obj("ending", status={"phase": "Terminating"}))

    storage.create(Key(GROUP, resource, "live", "a"), _obj("a", "live"), namespace=live)
    with pytest.raises(NamespaceTerminating):
        storage.create(Key(GROUP, resource, "ending", "a"), _obj("a", "ending"), namespace=ending)
    with pytest.raises(KeyNotFound) as missing:
        storage.create(Key(GROUP, resource, "gone", "a"), _obj("a", "gone"),
                       namespace=Key(GROUP, spaces, "", "gone"))
    assert missing.value.key.name == "gone"
    with pytest.raises(KeyNotFound):
        storage.get(Key(GROUP, resource, "ending", "a"))


def test_every_write_takes_a_larger_version_from_one_sequence(storage, resource) -> None:
    """Across keys and resources, in the order the writes were acknowledged."""
    seen = []
    a, b = Key(GROUP, resource, "ns", "a"), Key(GROUP, f"{resource}-other", "", "b")
    seen.append(_rv(storage.create(a, _obj("a", "ns"))))
    seen.append(_rv(storage.create(b, _obj("b"))))
    seen.append(_rv(storage.update(a, _obj("a", "ns", spec={"v": 2}), seen[0])))
    seen.append(_rv(storage.delete(b, seen[1])))
    assert seen == sorted(set(seen)), seen
    assert storage.current_revision() >= seen[-1]


def test_update_is_compare_and_swap(storage, resource) -> None:
    key = Key(GROUP, resource, "ns", "a")
    v1 = _rv(storage.create(key, _obj("a", "ns", spec={"v": 1})))
    v2 = _rv(storage.update(key, _obj("a", "ns", spec={"v": 2}), v1))
    assert v2 > v1
    with pytest.raises(ResourceVersionConflict):
        storage.update(key, _obj("a", "ns", spec={"v": 3}), v1)
    assert storage.get(key)["spec"] == {"v": 2}
    with pytest.raises(KeyNotFound):
        storage.update(Key(GROUP, resource, "ns", "nobody"), _obj("nobody", "ns"), v2)


def test_delete_is_compare_and_swap_and_returns_the_last_state(storage, resource) -> None:
    key = Key(GROUP, resource, "ns", "a")
    v1 = _rv(storage.create(key, _obj("a", "ns", spec={"v": 1})))
    v2 = _rv(storage.update(key, _obj("a", "ns", spec={"v": 2}), v1))
    with pytest.raises(ResourceVersionConflict):
        storage.delete(key, v1)
    gone = storage.delete(key, v2)
    assert gone["spec"] == {"v": 2} and _rv(gone) > v2, "stamped with the delete's version"
    with pytest.raises(KeyNotFound):
        storage.get(key)
    with pytest.raises(KeyNotFound):
        storage.delete(key, _rv(gone))


def test_guaranteed_update_retries_a_lost_race_on_the_newer_object(storage, resource) -> None:
    key = Key(GROUP, resource, "ns", "a")
    storage.create(key, _obj("a", "ns", spec={"count": 0}))
    calls = []

    def increment(current: dict) -> dict:
        calls.append(current["spec"]["count"])
        if len(calls) == 1:  # another writer gets in between our read and our write
            storage.update(key, {**current, "spec": {"count": 10}}, _rv(current))
        current["spec"]["count"] += 1
        return current

    assert storage.guaranteed_update(key, increment)["spec"] == {"count": 11}
    assert calls == [0, 10]


def test_guaranteed_update_with_a_version_precondition_does_not_retry(storage, resource) -> None:
    """A PUT with a resourceVersion that lost the race is the client's conflict (409)."""
    key = Key(GROUP, resource, "ns", "a")
    v1 = _rv(storage.create(key, _obj("a", "ns", spec={"v": 1})))
    storage.update(key, _obj("a", "ns", spec={"v": 2}), v1)
    with pytest.raises(ResourceVersionConflict):
        storage.guaranteed_update(key, lambda o: o, Preconditions(resource_version=v1))
    uid = storage.get(key)["metadata"]["uid"]
    with pytest.raises(ResourceVersionConflict) as wrong_uid:
        storage.guaranteed_delete(key, Preconditions(uid=str(uuid.uuid4())))
    assert f"UID in object meta: {uid}" in wrong_uid.value.message
    storage.guaranteed_delete(key, Preconditions(uid=uid))
    with pytest.raises(KeyNotFound):
        storage.get(key)


def test_a_list_is_ordered_by_namespace_then_name_and_filtered(storage, resource) -> None:
    for ns, name in [("b", "x"), ("a", "z"), ("a", "y"), ("b", "a")]:
        storage.create(Key(GROUP, resource, ns, name), _obj(name, ns))
    everything = storage.list(ListQuery(GROUP, resource))
    assert [(o["metadata"]["namespace"], o["metadata"]["name"]) for o in everything.items] == [
        ("a", "y"), ("a", "z"), ("b", "a"), ("b", "x")]
    assert everything.revision >= max(_rv(o) for o in everything.items)
    assert _names(storage.list(ListQuery(GROUP, resource, "b"))) == ["a", "x"]
    assert _names(storage.list(ListQuery(GROUP, resource, names=("z", "x", "missing")))) == ["z", "x"]
    assert _names(storage.list(ListQuery(GROUP, resource, "a", names=("x",)))) == []


def test_a_list_at_a_past_revision_is_the_state_then(storage, resource) -> None:
    """Updated objects as they were, deleted ones still there, later ones absent."""
    keep, change, drop = (Key(GROUP, resource, "ns", n) for n in ("keep", "change", "drop"))
    storage.create(keep, _obj("keep", "ns", spec={"v": 1}))
    v_change = _rv(storage.create(change, _obj("change", "ns", spec={"v": 1})))
    v_drop = _rv(storage.create(drop, _obj("drop", "ns", spec={"v": 1})))
    then = storage.current_revision()

    storage.update(change, _obj("change", "ns", spec={"v": 2}), v_change)
    storage.delete(drop, v_drop)
    storage.create(Key(GROUP, resource, "ns", "later"), _obj("later", "ns"))

    past = storage.list(ListQuery(GROUP, resource, at_revision=then))
    assert past.revision == then
    assert {o["metadata"]["name"]: o["spec"]["v"] for o in past.items if "spec" in o} == {
        "change": 1, "drop": 1, "keep": 1}
    assert _names(past) == ["change", "drop", "keep"]
    assert _names(storage.list(ListQuery(GROUP, resource, at_revision=then, names=("drop",)))) == ["drop"]
    now = storage.list(ListQuery(GROUP, resource))
    assert _names(now) == ["change", "keep", "later"]


def test_pages_cover_the_list_once_at_one_revision(storage, resource) -> None:
    """limit/after pages read at the first page's revision see neither later
    writes nor miss or repeat an object; count_remaining counts what is left."""
    for i in range(7):
        storage.create(Key(GROUP, resource, "ns", f"o{i}"), _obj(f"o{i}", "ns"))
    first = storage.list(ListQuery(GROUP, resource, limit=3, count_remaining=True))
    assert _names(first) == ["o0", "o1", "o2"] and first.remaining == 4
    storage.create(Key(GROUP, resource, "ns", "o10"), _obj("o10", "ns"))  # sorts inside the rest
    storage.delete(Key(GROUP, resource, "ns", "o5"), _rv(storage.get(Key(GROUP, resource, "ns", "o5"))))

    seen, page = _names(first), first
    while page.last_key is not None:
        page = storage.list(ListQuery(GROUP, resource, limit=3, after=page.last_key,
                                      at_revision=first.revision))
        assert page.revision == first.revision
        seen += _names(page)
    assert seen == [f"o{i}" for i in range(7)]


def test_the_count_of_what_remains_is_of_the_pages_revision(storage, resource) -> None:
    """A page read at a past revision counts what its next pages will hold
    then: not objects created since, still objects deleted or changed since
    (also under a label selector, by the labels they had then)."""
    from kapi.selectors import parse_label_selector

    def labelled(name: str, tier: str) -> dict:
        obj = _obj(name, "ns")
        obj["metadata"]["labels"] = {"tier": tier}
        return obj

    version = {}
    for i in range(8):
        version[i] = _rv(storage.create(Key(GROUP, resource, "ns", f"o{i}"), labelled(f"o{i}", "ab"[i % 2])))
    storage.create(Key(GROUP, resource, "other", "o9"), _obj("o9", "other"))
    then = storage.current_revision()
    storage.create(Key(GROUP, resource, "ns", "o35"), labelled("o35", "b"))
    storage.delete(Key(GROUP, resource, "ns", "o4"), version[4])
    storage.update(Key(GROUP, resource, "ns", "o5"), labelled("o5", "a"), version[5])
    storage.delete(Key(GROUP, resource, "ns", "o6"), version[6])
    storage.create(Key(GROUP, resource, "ns", "o6"), labelled("o6", "b"))

    def walk(at: int | None = then, labels: str = "") -> list[tuple[list[str], int | None]]:
        pages, after = [], None
        while True:
            page = storage.list(ListQuery(GROUP, resource, "ns", labels=parse_label_selector(labels), limit=2,
                                          after=after, at_revision=at, count_remaining=True))
            pages.append((_names(page), page.remaining))
            if page.last_key is None:
                return pages
            after = page.last_key

    assert walk() == [(["o0", "o1"], 6), (["o2", "o3"], 4), (["o4", "o5"], 2), (["o6", "o7"], None)]
    assert walk(labels="tier=b") == [(["o1", "o3"], 2), (["o5", "o7"], None)]
    assert walk(labels="tier=a") == [(["o0", "o2"], 2), (["o4", "o6"], None)]
    # Now: o35 is there, o4 is not, o5 and o6 have their new labels.
    assert walk(at=None) == [(["o0", "o1"], 6), (["o2", "o3"], 4), (["o35", "o5"], 2), (["o6", "o7"], None)]
    assert walk(at=None, labels="tier=a") == [(["o0", "o2"], 1), (["o5"], None)]


def test_history_below_the_compacted_revision_is_expired(storage, resource) -> None:
    from kapi.storage.compaction import compact_step

    key = Key(GROUP, resource, "ns", "a")
    v1 = _rv(storage.create(key, _obj("a", "ns", spec={"v": 1})))
    before = storage.current_revision()
    storage.update(key, _obj("a", "ns", spec={"v": 2}), v1)
    target = storage.current_revision()
    while compact_step(target) is not None:
        pass
    assert storage.compacted_revision() >= target
    with pytest.raises(ResourceVersionExpired):
        storage.list(ListQuery(GROUP, resource, at_revision=before))
    at_target = storage.list(ListQuery(GROUP, resource, at_revision=target))
    assert [o["spec"] for o in at_target.items] == [{"v": 2}], "the state at the compacted revision stays"


def test_latest_change_revision_moves_with_every_write_of_its_resource(storage, resource) -> None:
    key = Key(GROUP, resource, "", "a")
    before = storage.latest_change_revision(GROUP, resource)
    created = storage.create(key, _obj("a"))
    after_create = storage.latest_change_revision(GROUP, resource)
    storage.create(Key(GROUP, f"{resource}-other", "", "b"), _obj("b"))
    assert storage.latest_change_revision(GROUP, resource) == after_create != before
    storage.delete(key, _rv(created))
    assert storage.latest_change_revision(GROUP, resource) != after_create


def test_selectors_narrow_current_and_past_lists_alike(storage, resource) -> None:
    """The parsed label and field selectors, as the registry hands them over,
    select the same objects now and at a past revision (labels of the past
    come from the change log's copy of the object)."""
    from kapi.selectors import parse_field_selector, parse_label_selector

    supported = {"metadata.name": "metadata.name", "spec.tier": "spec.tier"}
    web = Key(GROUP, resource, "ns", "web")
    v_web = _rv(storage.create(web, {**_obj("web", "ns", spec={"tier": "front"}),
                                     "metadata": {**_obj("web", "ns")["metadata"], "labels": {"app": "web"}}}))
    storage.create(Key(GROUP, resource, "ns", "db"),
                   {**_obj("db", "ns", spec={"tier": "back"}),
                    "metadata": {**_obj("db", "ns")["metadata"], "labels": {"app": "db", "rank": "3"}}})
    then = storage.current_revision()
    relabelled = storage.get(web)
    relabelled["metadata"]["labels"] = {"app": "db"}
    storage.update(web, relabelled, v_web)

    def names(labels: str = "", fields: str = "", at: int | None = None) -> list[str]:
        query = ListQuery(GROUP, resource, labels=parse_label_selector(labels),
                          fields=parse_field_selector(fields, supported), at_revision=at)
        return _names(storage.list(query))

    assert names("app=db") == ["db", "web"]
    assert names("app=db", at=then) == ["db"]
    assert names("app in (web),!rank", at=then) == ["web"]
    assert names("rank>2") == ["db"] and names("rank>3") == []
    assert names(fields="spec.tier=front") == ["web"]
    assert names("app=db", "metadata.name!=web") == ["db"]
    assert names(fields="spec.tier=front", at=then) == ["web"]


def test_keys_and_counts_describe_what_is_stored(storage, resource) -> None:
    a = storage.create(Key(GROUP, resource, "ns", "a"), _obj("a", "ns"))
    storage.create(Key(GROUP, resource, "", "b"), _obj("b"))
    storage.create(Key(GROUP, f"{resource}-other", "ns", "c"), _obj("c", "ns"))
    assert set(storage.keys(GROUP, [resource])) == {Key(GROUP, resource, "ns", "a"), Key(GROUP, resource, "", "b")}
    assert len(storage.keys(GROUP, [resource, f"{resource}-other"])) == 3
    counts = storage.count_by_resource()
    assert counts[(GROUP, resource)] == 2 and counts[(GROUP, f"{resource}-other")] == 1
    assert [storage.count_up_to(GROUP, resource, n) for n in (1, 2, 5)] == [1, 2, 2]
    assert storage.count_up_to(GROUP, f"{resource}-none", 5) == 0
    changes = storage.change_log_size()
    storage.delete(Key(GROUP, resource, "ns", "a"), _rv(a))
    assert storage.count_by_resource()[(GROUP, resource)] == 1
    assert storage.change_log_size() == changes + 1, "a deletion is a change too"


def test_the_change_stamp_of_a_group_moves_with_its_writes_only(storage, resource) -> None:
    group = f"{resource}.stamp.{GROUP}"
    before = storage.change_stamp(group)
    created = storage.create(Key(group, resource, "", "a"), _obj("a"))
    moved = storage.change_stamp(group)
    assert moved != before and moved[0] == _rv(created)
    storage.create(Key(GROUP, resource, "", "elsewhere"), _obj("elsewhere"))
    assert storage.change_stamp(group) == moved
    storage.delete(Key(group, resource, "", "a"), _rv(created))
    assert storage.change_stamp(group) != moved


def _feed(storage, consumer: str, resource: str, limit: int = 1000):
    """Everything ``consumer`` reads now, of ``resource`` only (other tests write too)."""
    batch = storage.read_feed(consumer, limit)
    return batch, [c for c in batch.changes if c.key.resource == resource]


def test_a_feed_without_a_cursor_is_expired_until_it_moves(storage, resource) -> None:
    """A consumer new to the change log must rebuild from the objects: its
    first read says expired (and new: no history was lost, so nothing to warn
    about), reads nothing, and names where to move."""
    consumer = f"contract-{resource}"
    batch = storage.read_feed(consumer, 10)
    assert batch.expired and batch.new and batch.changes == []
    assert batch.end > 0
    storage.advance_feed(consumer, batch.end)
    assert not storage.read_feed(consumer, 10).expired


def test_a_feed_reads_each_change_after_its_cursor_once_in_version_order(storage, resource) -> None:
    consumer = f"contract-{resource}"
    storage.advance_feed(consumer, storage.current_revision())
    key = Key(GROUP, resource, "ns", "a")
    created = storage.create(key, _obj("a", "ns", spec={"v": 1}, status={"phase": "new"}))
    updated = storage.update(key, _obj("a", "ns", spec={"v": 2}), _rv(created))
    storage.delete(key, _rv(updated))
    batch, mine = _feed(storage, consumer, resource)
    assert not batch.expired
    assert [c.type for c in mine] == ["ADDED", "MODIFIED", "DELETED"]
    assert [c.revision for c in batch.changes] == sorted(c.revision for c in batch.changes)
    first = mine[0]
    assert first.key == key and first.uid == created["metadata"]["uid"]
    assert first.metadata["name"] == "a" and first.status == {"phase": "new"}
    assert batch.end >= mine[-1].revision
    storage.advance_feed(consumer, batch.end)
    assert _feed(storage, consumer, resource)[1] == [], "a moved cursor reads nothing twice"


def test_a_full_feed_batch_ends_at_its_last_change_and_the_cursor_never_moves_back(
    storage, resource
) -> None:
    consumer = f"contract-{resource}"
    start = storage.current_revision()
    storage.advance_feed(consumer, start)
    for name in ("a", "b", "c"):
        storage.create(Key(GROUP, resource, "", name), _obj(name))
    batch = storage.read_feed(consumer, 2)
    assert len(batch.changes) == 2 and batch.end == batch.changes[-1].revision
    storage.advance_feed(consumer, batch.end)
    storage.advance_feed(consumer, start)  # an older position is ignored
    rest = _feed(storage, consumer, resource)[1]
    names = [c.key.name for c in batch.changes if c.key.resource == resource] + [
        c.key.name for c in rest
    ]
    assert sorted(names) == ["a", "b", "c"], "every change read once across the batches"


def test_a_feed_behind_the_compacted_history_is_expired(storage, resource) -> None:
    from kapi.storage.compaction import compact_step

    consumer = f"contract-{resource}"
    storage.advance_feed(consumer, storage.current_revision())
    storage.create(Key(GROUP, resource, "", "a"), _obj("a"))
    target = storage.current_revision()
    while compact_step(target) is not None:
        pass
    batch = storage.read_feed(consumer, 10)
    assert batch.expired and not batch.new and batch.changes == [] and batch.end >= target


def test_a_filtered_feed_reads_only_the_groups_resources_and_labels_it_names(storage, resource) -> None:
    from kapi.storage.interface import ChangeFilter

    consumer = f"contract-{resource}"
    storage.advance_feed(consumer, storage.current_revision())
    other = f"other.{GROUP}"
    storage.create(Key(GROUP, resource, "", "in-group"), _obj("in-group"))
    labelled = _obj("labelled")
    labelled["metadata"]["labels"] = {"contract.test/owner": "x"}
    storage.create(Key(other, resource, "", "labelled"), labelled)
    storage.create(Key(other, resource, "", "neither"), _obj("neither"))
    storage.create(Key(other, f"{resource}-named", "", "named"), _obj("named"))
    storage.create(Key(GROUP, f"{resource}-named", "", "same-resource-other-group"), _obj("x"))
    select = ChangeFilter(
        groups=(GROUP,), labels=("contract.test/owner",), resources=((other, f"{resource}-named"),)
    )
    batch = storage.read_feed(consumer, 1000, select)
    names = sorted(c.key.name for c in batch.changes if c.key.resource.startswith(resource))
    assert names == ["in-group", "labelled", "named", "same-resource-other-group"]
    only_resources = ChangeFilter(resources=((other, f"{resource}-named"),))
    batch = storage.read_feed(consumer, 1000, only_resources)
    assert [c.key.name for c in batch.changes if c.key.resource.startswith(resource)] == ["named"]
    full = storage.read_feed(consumer, 1, select)
    assert full.end == full.changes[-1].revision, "a full filtered batch ends at its last change"


def test_a_feed_reads_only_the_metadata_keys_it_names(storage, resource) -> None:
    consumer = f"contract-{resource}"
    storage.advance_feed(consumer, storage.current_revision())
    owned = _obj("owned")
    owned["metadata"]["ownerReferences"] = [{"apiVersion": "v1", "kind": "X", "name": "o", "uid": "u"}]
    owned["metadata"]["labels"] = {"a": "b"}
    owned["status"] = {"phase": "Done"}
    storage.create(Key(GROUP, resource, "", "owned"), owned)
    storage.create(Key(GROUP, resource, "", "plain"), _obj("plain"))
    keys = ("deletionTimestamp", "ownerReferences")
    changes = {
        c.key.name: c for c in storage.read_feed(consumer, 1000, None, keys).changes
        if c.key.resource == resource
    }
    assert changes["owned"].metadata == {"ownerReferences": owned["metadata"]["ownerReferences"]}
    assert changes["plain"].metadata == {} and changes["owned"].status == {}
    whole = {c.key.name: c for c in storage.read_feed(consumer, 1000).changes if c.key.resource == resource}
    assert whole["owned"].metadata["labels"] == {"a": "b"} and whole["owned"].metadata["name"] == "owned"
    assert whole["owned"].status == {"phase": "Done"}


# What controllers ask of storage: objects by uid, by owner, by namespace, by field.


def _meta(obj: dict, **meta) -> dict:
    """``obj`` with more metadata."""
    return {**obj, "metadata": {**obj["metadata"], **meta}}


_DELETED_AT = "2026-01-01T00:00:00Z"


def test_an_object_is_found_by_its_uid(storage, resource) -> None:
    key = Key(GROUP, resource, "ns", "a")
    created = storage.create(key, _obj("a", "ns", spec={"v": 1}))
    assert storage.get_by_uid(created["metadata"]["uid"]) == (key, created)
    assert storage.get_by_uid(str(uuid.uuid4())) is None
    storage.delete(key, _rv(created))
    assert storage.get_by_uid(created["metadata"]["uid"]) is None


def test_summaries_name_where_an_object_is_and_how_it_is_being_deleted(storage, resource) -> None:
    """A summary carries the key, the uid, whether deletionTimestamp is set,
    the finalizers and the ownerReferences (entries that are objects only)."""
    owner = {"apiVersion": "v1", "kind": "Owner", "name": "o", "uid": str(uuid.uuid4())}
    going = storage.create(
        Key(GROUP, resource, "ns", "going"),
        _meta(_obj("going", "ns"), deletionTimestamp=_DELETED_AT, finalizers=["orphan", "x/y"],
              ownerReferences=[owner, "not an object"]),
    )
    plain = storage.create(Key(GROUP, resource, "other", "plain"), _obj("plain", "other"))
    uids = [going["metadata"]["uid"], plain["metadata"]["uid"], str(uuid.uuid4())]
    found = {s.uid: s for s in storage.summaries_by_uid(uids)}
    assert set(found) == set(uids[:2])
    g, p = found[uids[0]], found[uids[1]]
    assert g.key == Key(GROUP, resource, "ns", "going") and g.deleting
    assert g.finalizers == ("orphan", "x/y") and g.owner_references == (owner,)
    assert p.key == Key(GROUP, resource, "other", "plain") and not p.deleting
    assert p.finalizers == () and p.owner_references == ()
    assert storage.summaries_by_uid([]) == []

    by_name = storage.summaries_by_name((GROUP, resource), "ns", ["going", "plain", "none"])
    assert [s.uid for s in by_name] == [uids[0]], "only the names asked for, in that namespace"
    assert storage.summaries_by_name((GROUP, resource), "ns", []) == []


def test_summaries_with_a_top_level_field(storage, resource) -> None:
    storage.create(Key(GROUP, resource, "", "with"), _obj("with", aggregationRule={}))
    storage.create(Key(GROUP, resource, "", "without"), _obj("without", rules=[]))
    storage.create(Key(GROUP, f"{resource}-other", "", "elsewhere"), _obj("elsewhere", aggregationRule={}))
    found = storage.summaries_with((GROUP, resource), "aggregationRule")
    assert [s.key.name for s in found] == ["with"]


def test_has_field_tells_whether_a_path_is_set(storage, resource) -> None:
    waiting = Key(GROUP, resource, "ns", "waiting")
    storage.create(waiting, _obj("waiting", "ns", status={"healthCheckDeadline": "soon"}))
    storage.create(Key(GROUP, resource, "ns", "null"), _obj("null", "ns", status={"healthCheckDeadline": None}))
    storage.create(Key(GROUP, resource, "ns", "idle"), _obj("idle", "ns", status={"phase": "Ready"}))
    path = ("status", "healthCheckDeadline")
    assert storage.has_field(waiting, path)
    assert storage.has_field(Key(GROUP, resource, "ns", "null"), path), "a JSON null is set"
    assert not storage.has_field(Key(GROUP, resource, "ns", "idle"), path)
    assert not storage.has_field(Key(GROUP, resource, "ns", "absent"), path)
    assert not storage.has_field(Key(GROUP, f"{resource}-other", "ns", "waiting"), path)


def test_dependents_of_owners_in_uid_order_and_a_limit_at_a_time(storage, resource) -> None:
    first, second, nobody = (str(uuid.uuid4()) for _ in range(3))

    def owned_by(name: str, *owners: str) -> dict:
        refs = [{"apiVersion": "v1", "kind": "Owner", "name": "o", "uid": u} for u in owners]
        return storage.create(Key(GROUP, resource, "ns", name), _meta(_obj(name, "ns"), ownerReferences=refs))

    a, b, c = owned_by("a", first), owned_by("b", first, second), owned_by("c", second)
    storage.create(Key(GROUP, resource, "ns", "free"), _obj("free", "ns"))
    uid = {o["metadata"]["name"]: o["metadata"]["uid"] for o in (a, b, c)}

    found = storage.dependents([first])
    assert sorted(s.key.name for s in found) == ["a", "b"]
    assert [s.uid for s in found] == sorted(s.uid for s in found), "in uid order"
    both = storage.dependents([first, second])
    assert {s.uid for s in both} == set(uid.values())
    assert storage.dependents([first, second], limit=2) == both[:2]
    assert storage.dependents([nobody]) == [] and storage.dependents([]) == []
    mine = [s for s in storage.with_owners() if s.key.group == GROUP and s.key.resource == resource]
    assert sorted(s.key.name for s in mine) == ["a", "b", "c"], "every owned object, no other"


def test_objects_being_deleted_with_a_finalizer_or_of_a_collection(storage, resource) -> None:
    spaces = (GROUP, f"{resource}-namespaces")
    storage.create(Key(GROUP, resource, "ns", "orphaning"),
                   _meta(_obj("orphaning", "ns"), deletionTimestamp=_DELETED_AT, finalizers=["orphan"]))
    storage.create(Key(GROUP, resource, "ns", "other-finalizer"),
                   _meta(_obj("other-finalizer", "ns"), deletionTimestamp=_DELETED_AT, finalizers=["x/y"]))
    storage.create(Key(GROUP, resource, "ns", "live"), _meta(_obj("live", "ns"), finalizers=["orphan"]))
    storage.create(Key(*spaces, "", "ending"), _meta(_obj("ending"), deletionTimestamp=_DELETED_AT))
    storage.create(Key(*spaces, "", "active"), _obj("active"))
    found = storage.being_deleted(["orphan", "foregroundDeletion"], [spaces])
    mine = sorted(s.key.name for s in found if s.key.group == GROUP and s.key.resource.startswith(resource))
    assert mine == ["ending", "orphaning"]
    assert all(s.deleting for s in found)


def test_namespaces_without_a_member(storage, resource) -> None:
    """Live namespaces that hold no object of the member's collection and name
    (the default ServiceAccount, say)."""
    spaces, accounts = (GROUP, f"{resource}-namespaces"), f"{resource}-accounts"
    for name, meta in (("served", {}), ("lacking", {}), ("ending", {"deletionTimestamp": _DELETED_AT})):
        storage.create(Key(*spaces, "", name), _meta(_obj(name), **meta))
    storage.create(Key(GROUP, accounts, "served", "default"), _obj("default", "served"))
    storage.create(Key(GROUP, accounts, "lacking", "builder"), _obj("builder", "lacking"))
    found = storage.namespaces_without(spaces, Key(GROUP, accounts, "", "default"))
    assert [(s.key, s.deleting) for s in found] == [(Key(*spaces, "", "lacking"), False)]


def test_what_a_namespace_holds_is_counted_per_collection_and_finalizer(storage, resource) -> None:
    ns, other = f"{resource}-ns", (GROUP, f"{resource}-other")
    mine = (GROUP, resource)
    storage.create(Key(*mine, ns, "a"), _meta(_obj("a", ns), finalizers=["x/y", "orphan"]))
    storage.create(Key(*mine, ns, "b"), _meta(_obj("b", ns), finalizers=["x/y"], deletionTimestamp=_DELETED_AT))
    storage.create(Key(*mine, ns, "c"), _meta(_obj("c", ns), finalizers="not a list"))
    storage.create(Key(*other, ns, "d"), _meta(_obj("d", ns), deletionTimestamp=_DELETED_AT))
    storage.create(Key(*mine, f"{ns}-elsewhere", "e"), _meta(_obj("e", f"{ns}-elsewhere"), finalizers=["x/y"]))
    assert storage.count_in_namespace(ns, [mine, other]) == {mine: 3, other: 1}
    assert storage.count_in_namespace(ns, [mine]) == {mine: 3}
    assert storage.count_in_namespace(ns, [(GROUP, "nothing")]) == {}
    assert storage.finalizers_in_namespace(ns, [mine, other]) == {"orphan": 1, "x/y": 2}
    assert storage.finalizers_in_namespace(ns, [other]) == {}
    assert storage.count_deleting_in_namespace(ns) == 2, "of every collection"
