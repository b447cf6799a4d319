"""``list_encoded``: the list a list cache fills from, each object kept as
its JSON. It is ``list`` exactly (same objects, resourceVersions and key
order), streamed, in no order; a cache entry made from it serves those bytes as they
are, and parses them only for what needs the object."""

from __future__ import annotations

import orjson
from storage.conftest import GROUP, widget

from kapi.storage.interface import Key, ListQuery
from kapi.storage.listcache import Entry, ListCache
from kapi.storage.postgres import STREAM_ROWS


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
    entry = Entry(item=item)
    assert ListCache.encode(entry, None) is item.json  # served as stored: the same bytes

    def convert(obj):
        obj["spec"] = {"renamed": obj.pop("n")}
        return obj

    converted = Entry(item=item)
    assert orjson.loads(ListCache.encode(converted, convert))["spec"] == {"renamed": 1}
    assert converted.stored["n"] == 1 and orjson.loads(item.json)["n"] == 1  # kept as it was
    # An entry made from an event's object converts a copy, and keeps the object.
    parsed = orjson.loads(item.json)
    from_event = Entry(parsed)
    assert orjson.loads(ListCache.encode(from_event, convert))["spec"] == {"renamed": 1}
    assert from_event.stored is parsed and parsed["n"] == 1
    assert from_event.labels == {} and entry.head["metadata"] == {"name": "a", "namespace": "ns", "labels": {}}
