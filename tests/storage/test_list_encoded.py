"""``list_encoded``: the list a list cache fills from, each object kept as
its JSON. It is ``list`` exactly (same objects, resourceVersions and key
order), streamed, in no order; a cache entry made from it serves those bytes
as they are, and parses them only for what needs the object. A store stays
joined to its channel, which brings it up to date before it trims events."""

from __future__ import annotations

import functools

import orjson
from storage.conftest import GROUP, widget

from kapi.storage.changes import ChangeEvent
from kapi.storage.interface import EncodedList, Key, ListQuery
from kapi.storage.listcache import Entry, ListCache, Store, _catch_up
from kapi.storage.postgres import STREAM_ROWS
from kapi.storage.watchcache import Channel


def test_list_encoded_is_list_as_json(storage, resource) -> None:
    count = STREAM_ROWS * 2 + 7  # more than one chunk of the stream
    for i in range(count):
        obj = widget(f"w{i:04}", f"ns{i % 3}", n=i)
        if i % 2:
            obj["metadata"]["labels"] = {"app": "web", "n": str(i)}
        storage.create(Key(GROUP, resource, f"ns{i % 3}", f"w{i:04}"), obj)
    storage.create(Key(GROUP, resource, "", "cluster-wide"), widget("cluster-wide"))
    query = ListQuery(GROUP, resource)
    listed, encoded = storage.list(query), storage.list_encoded(query)
    assert encoded.revision >= listed.revision
    by_key = {(item.namespace, item.name): item for item in encoded.items}
    assert len(by_key) == len(encoded.items) == len(listed.items) == count + 1
    for obj in listed.items:
        meta = obj["metadata"]
        item = by_key[meta.get("namespace", ""), meta["name"]]
        assert item.json == orjson.dumps(obj)  # the same keys in the same order
        assert item.labels == meta.get("labels", {})


def test_an_entry_serves_its_stored_json_and_converts_a_private_copy(storage, resource) -> None:
    storage.create(Key(GROUP, resource, "ns", "a"), widget("a", "ns", n=1))
    (item,) = storage.list_encoded(ListQuery(GROUP, resource)).items
    entry = Entry(item)
    assert ListCache.encode(entry, None) is item.json  # served as stored: the same bytes

    def convert(obj):
        obj["spec"] = {"renamed": obj.pop("n")}
        return obj

    converted = Entry(item)
    assert orjson.loads(ListCache.encode(converted, convert))["spec"] == {"renamed": 1}
    assert converted.stored["n"] == 1 and orjson.loads(item.json)["n"] == 1  # kept as it was
    assert entry.labels == {} and entry.head["metadata"] == {"name": "a", "namespace": "ns", "labels": {}}


def _event(rv: int, name: str, type: str = "ADDED") -> ChangeEvent:
    raw = orjson.dumps({"apiVersion": "v1", "kind": "Widget", "metadata": {"name": name, "labels": {"n": str(rv)}}})
    return ChangeEvent(rv, GROUP, "widgets", "ns", name, type, raw, None)


def _kept(channel: Channel) -> Store:
    store = Store()
    store.fill(EncodedList([], 0))
    store.position = channel.end
    channel.keepers["store"] = functools.partial(_catch_up, store)
    return store


def test_a_channel_keeps_its_stores_up_to_date_before_it_trims() -> None:
    """A store joined to its channel applies the events the channel is about
    to trim, so it never needs a fill from the database because they are
    gone; events applied from a channel are kept as JSON, like a fill's."""
    channel = Channel(floor=0, capacity=8)
    store = _kept(channel)
    for rv in range(1, 41):
        channel.publish([_event(rv, f"o{rv % 12}", "ADDED" if rv <= 12 else "MODIFIED")])
    channel.publish([_event(41, "o0", "DELETED")])
    assert channel.offset > 0 and channel.since(0) is None  # it trimmed
    assert store.position is not None and store.position >= channel.offset
    store.apply(channel.since(store.position), 0)
    assert sorted(name for _ns, name in store.objects) == sorted(f"o{i}" for i in range(1, 12))
    entry = store.objects[("ns", "o5")]
    assert orjson.loads(entry.item.json)["metadata"] == {"name": "o5", "resourceVersion": "29", "labels": {"n": "29"}}
    assert entry.labels == {"n": "29"}


def test_a_store_in_use_is_left_to_its_request_and_filled_again_if_it_lost_events() -> None:
    channel = Channel(floor=0, capacity=8)
    store = _kept(channel)
    with store.lock:  # a request reads the store: the channel does not wait for it
        for rv in range(1, 30):
            channel.publish([_event(rv, f"o{rv}")])
    assert store.objects == {}
    channel.publish([_event(rv, f"o{rv}") for rv in range(30, 42)])
    assert store.position is None  # the events it needed were trimmed: the next list fills it
