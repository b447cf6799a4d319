"""Field selectors parse, print, match and compile to SQL like kube's."""

from __future__ import annotations

import json

import pytest

from kapi.selectors import SelectorError, parse_field_selector
from kapi.storage.selection import field_predicates

SUPPORTED = {
    "metadata.name": "metadata.name",
    "metadata.namespace": "metadata.namespace",
    "type": "type",
    "involvedObject.kind": "involvedObject.kind",
    "spec.nodeName": "spec.nodeName",
    "spec.unschedulable": "spec.unschedulable",
}
COLUMNS = {"metadata.name": "name", "metadata.namespace": "namespace"}

CANONICAL = [
    ("", ""),
    ("metadata.name=a", "metadata.name=a"),
    ("metadata.name==a", "metadata.name=a"),
    ("metadata.name!=a", "metadata.name!=a"),
    ("spec.nodeName=", "spec.nodeName="),
    ("type=b,metadata.name=a", "metadata.name=a,type=b"),
    ("metadata.name=a,,type=b,", "metadata.name=a,type=b"),
    (r"type=a\,b\=c\\d", r"type=a\,b\=c\\d"),
    ("type=a!b", "type=a!b"),
    ("type=a b", "type=a b"),
]


@pytest.mark.parametrize(("text", "canonical"), CANONICAL)
def test_canonical_string(text: str, canonical: str) -> None:
    """Terms are sorted, == prints as =, and values are re-escaped."""
    selector = parse_field_selector(text, SUPPORTED)
    assert str(selector) == canonical
    assert parse_field_selector(canonical, SUPPORTED) == selector


def test_unescaped_values() -> None:
    """Escapes of backslash, comma and equals are undone in the value."""
    selector = parse_field_selector(r"type=a\,b\=c\\d", SUPPORTED)
    assert selector.requirements[0].value == "a,b=c\\d"


ERRORS = [
    ("foo=bar", "field label not supported: foo"),
    ("metadata.name=a,zzz=b", "field label not supported: zzz"),
    (
        "metadata.name",
        "invalid selector: 'metadata.name'; can't understand 'metadata.name'",
    ),
    ("type=a,b", "invalid selector: 'type=a,b'; can't understand 'b'"),
    ("type=a=b", "invalid field selector: unescaped character in value: 61"),
    (r"type=a\!b", r"invalid field selector: invalid escape sequence: \!"),
    ("type=a\\", "invalid field selector: invalid escape sequence: \\"),
    ("metadata.name = a", "field label not supported: metadata.name "),
]


@pytest.mark.parametrize(("text", "message"), ERRORS)
def test_errors(text: str, message: str) -> None:
    """Bad syntax and unsupported fields raise kube's messages."""
    with pytest.raises(SelectorError) as info:
        parse_field_selector(text, SUPPORTED)
    assert str(info.value) == message


POD = {"metadata": {"name": "p", "namespace": "ns"}, "spec": {"nodeName": "n1"}}
EVENT = {
    "metadata": {"name": "e", "namespace": "ns"},
    "type": "Warning",
    "involvedObject": {"kind": "Pod"},
}
NODE = {"metadata": {"name": "n1"}, "spec": {"unschedulable": True}}

MATCHES = [
    ("", POD, True),
    ("metadata.name=p", POD, True),
    ("metadata.name=q", POD, False),
    ("metadata.name!=q", POD, True),
    ("metadata.namespace=ns,metadata.name=p", POD, True),
    ("spec.nodeName=", POD, False),
    ("spec.nodeName=", EVENT, True),
    ("spec.nodeName!=", EVENT, False),
    ("involvedObject.kind=Pod,type=Warning", EVENT, True),
    ("involvedObject.kind=Node", EVENT, False),
    ("metadata.namespace=", NODE, True),
    ("spec.unschedulable=true", NODE, True),
    ("spec.unschedulable=false", NODE, False),
]


@pytest.mark.parametrize(("text", "obj", "expected"), MATCHES)
def test_matches(text: str, obj: dict, expected: bool) -> None:
    """A missing field reads as the empty string."""
    assert parse_field_selector(text, SUPPORTED).matches(obj) is expected


def test_requires_exact_and_empty() -> None:
    """Only an equality term pins a field; the empty selector is empty."""
    selector = parse_field_selector("metadata.name=a,metadata.namespace!=b", SUPPORTED)
    assert selector.requires_exact("metadata.name") == "a"
    assert selector.requires_exact("metadata.namespace") is None
    assert selector.requires_exact("type") is None
    assert parse_field_selector("", SUPPORTED).empty
    assert not selector.empty


def test_sql_shape() -> None:
    """Columns are used as given; other fields come from {data} by a literal path."""
    selector = parse_field_selector(
        "metadata.name=a,involvedObject.kind!=Pod", SUPPORTED
    )
    assert field_predicates(selector, COLUMNS) == (
        ["COALESCE({data} #>> '{{involvedObject,kind}}', '') <> %s", "name = %s"],
        ["Pod", "a"],
    )


OBJECTS = [
    POD,
    EVENT,
    NODE,
    {"metadata": {"name": "a,b=c", "namespace": ""}, "type": None},
]
SQL_SELECTORS = [m[0] for m in MATCHES] + [r"metadata.name=a\,b\=c", "type=", "type!="]


@pytest.mark.parametrize("text", SQL_SELECTORS)
def test_sql_agrees_with_matches(pg_conn, text: str) -> None:
    """The SQL predicates select exactly the objects ``matches`` accepts."""
    selector = parse_field_selector(text, SUPPORTED)
    pg_conn.execute("DELETE FROM objects")
    for i, obj in enumerate(OBJECTS):
        meta = obj["metadata"]
        pg_conn.execute(
            "INSERT INTO objects (id, data, name, namespace) VALUES (%s, %s::jsonb, %s, %s)",
            [i, json.dumps(obj), meta["name"], meta.get("namespace", "")],
        )
    predicates, params = field_predicates(selector, COLUMNS)
    where = " AND ".join(f"({p})" for p in predicates) or "true"
    sql = f"SELECT id FROM objects WHERE {where}".format(data="data", labels="labels")
    got = {row[0] for row in pg_conn.execute(sql, params).fetchall()}
    assert got == {i for i, obj in enumerate(OBJECTS) if selector.matches(obj)}
