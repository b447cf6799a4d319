"""Label selectors parse, print, match and compile to SQL exactly like kube's."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kapi.selectors import (
    LabelSelector,
    SelectorError,
    label_selector_from_dict,
    parse_label_selector,
)
from kapi.storage.selection import label_predicates

KEY_RE = "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]'"

# (selector, canonical string): kube sorts requirements by key and values in sets.
CANONICAL = [
    ("", ""),
    ("x=a", "x=a"),
    ("x==a", "x==a"),
    ("x!=a", "x!=a"),
    ("x=", "x="),
    ("x", "x"),
    ("!x", "!x"),
    ("  !y  ,  x ", "x,!y"),
    ("x in (b,a)", "x in (a,b)"),
    ("x in (a,a)", "x in (a)"),
    ("x in ()", "x in ()"),
    ("x in (,a)", "x in (,a)"),
    ("x in (a,)", "x in (,a)"),
    ("x in (a,,b)", "x in (,a,b)"),
    ("x notin (b,a)", "x notin (a,b)"),
    ("x>1", "x>1"),
    ("x<10", "x<10"),
    ("z=1,y=2,x=3", "x=3,y=2,z=1"),
    ("in in (in,notin)", "in in (in,notin)"),
    ("example.com/app=web,tier", "example.com/app=web,tier"),
    ("a=b,\tc\n!=\rd", "a=b,c!=d"),
    ("x in(a),y notin(b)", "x in (a),y notin (b)"),
]


@pytest.mark.parametrize(("text", "canonical"), CANONICAL)
def test_canonical_string(text: str, canonical: str) -> None:
    """Parsing then printing gives kube's canonical form, which reparses to itself."""
    selector = parse_label_selector(text)
    assert str(selector) == canonical
    assert parse_label_selector(canonical) == selector


ERRORS = [
    (
        "x y",
        "unable to parse requirement: found 'y', expected: in, notin, =, ==, !=, gt, lt",
    ),
    ("x,", "found '', expected: identifier after ','"),
    (",x", "found ',', expected: !, identifier, or 'end of string'"),
    ("x=a=b", "found '=', expected: ',' or 'end of string'"),
    ("x=a b", "found 'b', expected: ',' or 'end of string'"),
    ("!x=a", "found '=', expected: ',' or 'end of string'"),
    ("x in a", "unable to parse requirement: found 'a' expected: '('"),
    ("x in (a b)", "unable to parse requirement: found 'b', expected: ',' or ')'"),
    ("x in (a", "unable to parse requirement: found '', expected: ',' or ')'"),
    (
        "x in (=)",
        "unable to parse requirement: found '=', expected: ',', ')' or identifier",
    ),
    ("x<=1", "unable to parse requirement: found '=', expected: identifier"),
    ("!", "unable to parse requirement: found '', expected: identifier"),
    ("x=(", "unable to parse requirement: found '(', expected: identifier"),
    (
        "x>a",
        'unable to parse requirement: values[0]: Invalid value: "a": '
        "for 'Gt', 'Lt' operators, the value must be an integer",
    ),
    (
        "x/y/z=a",
        'unable to parse requirement: <nil>: Invalid value: "x/y/z": a valid label key '
        "must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
        f"with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', "
        f"regex used for validation is {KEY_RE}) with an optional DNS subdomain prefix and "
        "'/' (e.g. 'example.com/MyName')",
    ),
    (
        "-x=a",
        'unable to parse requirement: <nil>: Invalid value: "-x": name part must consist '
        "of alphanumeric characters, '-', '_' or '.', and must start and end with an "
        "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used "
        f"for validation is {KEY_RE})",
    ),
    (
        "x=a_",
        'unable to parse requirement: values[0][x]: Invalid value: "a_": a valid label must '
        "be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must "
        "start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or "
        "'12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
    ),
    (
        "x=" + "a" * 64,
        'unable to parse requirement: values[0][x]: Invalid value: "'
        + "a" * 64
        + '": must be no more than 63 bytes',
    ),
]


@pytest.mark.parametrize(("text", "message"), ERRORS)
def test_errors(text: str, message: str) -> None:
    """Malformed selectors raise SelectorError with kube's exact message."""
    with pytest.raises(SelectorError) as info:
        parse_label_selector(text)
    assert str(info.value) == message


MATCHES = [
    ("", {}, True),
    ("x=a", {"x": "a"}, True),
    ("x=a", {"x": "b"}, False),
    ("x=a", {}, False),
    ("x==a", {"x": "a", "y": "b"}, True),
    ("x=", {"x": ""}, True),
    ("x=", {}, False),
    ("x!=a", {"x": "b"}, True),
    ("x!=a", {}, True),
    ("x!=a", {"x": "a"}, False),
    ("x in (a,b)", {"x": "b"}, True),
    ("x in (a,b)", {"x": "c"}, False),
    ("x in (a,b)", {}, False),
    ("x notin (a,b)", {"x": "c"}, True),
    ("x notin (a,b)", {}, True),
    ("x notin (a,b)", {"x": "a"}, False),
    ("x", {"x": ""}, True),
    ("x", {"y": "x"}, False),
    ("!x", {"y": "x"}, True),
    ("!x", {"x": "a"}, False),
    ("x>1", {"x": "2"}, True),
    ("x>1", {"x": "1"}, False),
    ("x>1", {"x": "a"}, False),
    ("x>1", {}, False),
    ("x<1", {"x": "-5"}, True),
    ("x<1", {"x": "007"}, False),
    ("x>1", {"x": "99999999999999999999"}, False),
    ("x>1", {"x": " 2"}, False),
    ("x>1", {"x": "2_0"}, False),
    ("x=a,y", {"x": "a", "y": ""}, True),
    ("x=a,y", {"x": "a"}, False),
]


@pytest.mark.parametrize(("text", "labels", "expected"), MATCHES)
def test_matches(text: str, labels: dict[str, str], expected: bool) -> None:
    """Matching follows kube: != and notin accept a missing key; gt/lt need integers."""
    assert parse_label_selector(text).matches(labels) is expected


def test_empty_and_requires_exact() -> None:
    """An empty selector restricts nothing; exact values come from =, == and single in."""
    assert parse_label_selector("").empty
    assert not parse_label_selector("x").empty
    selector = parse_label_selector("a=1,b==2,c in (3),d in (4,5),e!=6")
    assert [selector.requires_exact(k) for k in "abcdef"] == [
        "1",
        "2",
        "3",
        None,
        None,
        None,
    ]


FROM_DICT = [
    (None, None, "nothing"),
    ({}, "", "everything"),
    ({"matchLabels": {"b": "2", "a": "1"}}, "a=1,b=2", None),
    (
        {
            "matchLabels": {"app": "web"},
            "matchExpressions": [
                {"key": "tier", "operator": "In", "values": ["b", "a"]},
                {"key": "env", "operator": "NotIn", "values": ["dev"]},
                {"key": "canary", "operator": "DoesNotExist"},
                {"key": "team", "operator": "Exists"},
            ],
        },
        "app=web,!canary,env notin (dev),team,tier in (a,b)",
        None,
    ),
]


@pytest.mark.parametrize(("data", "canonical", "special"), FROM_DICT)
def test_label_selector_from_dict(
    data: dict | None, canonical: str | None, special: str | None
) -> None:
    """metav1.LabelSelector: None selects nothing, {} everything, else sorted requirements."""
    selector = label_selector_from_dict(data)
    if special == "nothing":
        assert not selector.matches({}) and not selector.empty
        assert label_predicates(selector) == (["false"], [])
        return
    assert str(selector) == canonical
    assert selector.empty is (special == "everything")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (
            {"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["1"]}]},
            '"Gt" is not a valid label selector operator',
        ),
        (
            {"matchExpressions": [{"key": "a", "operator": "In", "values": []}]},
            "values: Invalid value: []: for 'in', 'notin' operators, values set can't be empty",
        ),
        (
            {"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x"]}]},
            'values: Invalid value: ["x"]: values set must be empty for exists and does not exist',
        ),
        (
            {"matchLabels": {"a": "b c"}},
            'values[0][a]: Invalid value: "b c": a valid label must be an empty string or '
            "consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
            "alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for "
            "validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
        ),
    ],
)
def test_label_selector_from_dict_errors(data: dict, message: str) -> None:
    """Invalid metav1.LabelSelectors raise kube's NewRequirement / operator messages."""
    with pytest.raises(SelectorError) as info:
        label_selector_from_dict(data)
    assert str(info.value) == message


# ---------------------------------------------------------------- SQL agreement

OBJECTS: list[dict[str, str] | None] = [
    None,
    {},
    {"x": "a"},
    {"x": "b"},
    {"x": ""},
    {"x": "a", "y": "1"},
    {"y": "2"},
    {"y": "-3"},
    {"y": "abc"},
    {"y": "007"},
    {"y": "99999999999999999999"},
    {"y": "9223372036854775807"},
    {"x": "in", "y": "10", "z": "q"},
    {"example.com/app": "web"},
]

SQL_SELECTORS = [
    "",
    "x=a",
    "x==a",
    "x=",
    "x!=a",
    "x!=",
    "x in (a,b)",
    "x in (,a)",
    "x notin (a,b)",
    "x notin ()",
    "x",
    "!x",
    "y>1",
    "y<1",
    "y>0",
    "y<9223372036854775807",
    "x=a,y",
    "!x,!y",
    "x in (in),z",
    "example.com/app=web",
    "x notin (a),y>0",
]


def _sql_matches(
    conn, selector: LabelSelector, labels_expr: str = "labels"
) -> set[int]:
    predicates, params = label_predicates(selector)
    where = " AND ".join(f"({p})" for p in predicates) or "true"
    sql = f"SELECT id FROM objects WHERE {where}".format(
        labels=labels_expr, data="data"
    )
    return {row[0] for row in conn.execute(sql, params).fetchall()}


def _load(conn, objects: list[dict[str, str] | None]) -> None:
    conn.execute("DELETE FROM objects")
    for i, labels in enumerate(objects):
        conn.execute(
            "INSERT INTO objects (id, labels, data) VALUES (%s, %s::jsonb, %s::jsonb)",
            [
                i,
                None if labels is None else json.dumps(labels),
                json.dumps(
                    {"metadata": {"labels": labels} if labels is not None else {}}
                ),
            ],
        )


@pytest.mark.parametrize("text", SQL_SELECTORS)
def test_sql_agrees_with_matches(pg_conn, text: str) -> None:
    """The SQL predicates select exactly the objects ``matches`` accepts, NULL labels included."""
    selector = parse_label_selector(text)
    _load(pg_conn, OBJECTS)
    expected = {i for i, labels in enumerate(OBJECTS) if selector.matches(labels)}
    assert _sql_matches(pg_conn, selector) == expected
    # The same through a nested expression, as a handler reading the object JSON would.
    assert _sql_matches(pg_conn, selector, "data->'metadata'->'labels'") == expected


_keys = st.sampled_from(["a", "b", "example.com/c"])
_values = st.sampled_from(["", "1", "2", "10", "-1", "x", "y", "007", "in"])
_labels = st.one_of(st.none(), st.dictionaries(_keys, _values, max_size=3))


@st.composite
def _requirements(draw) -> str:
    k = draw(_keys)
    v = draw(_values.filter(lambda s: s and s[0].isalnum()))
    vs = ",".join(
        draw(
            st.lists(
                _values.filter(lambda s: not s or s[0].isalnum()),
                min_size=1,
                max_size=3,
            )
        )
    )
    n = draw(st.sampled_from(["0", "1", "5", "010"]))
    return draw(
        st.sampled_from(
            [
                f"{k}={v}",
                f"{k}!={v}",
                f"{k} in ({vs})",
                f"{k} notin ({vs})",
                k,
                f"!{k}",
                f"{k}>{n}",
                f"{k}<{n}",
            ]
        )
    )


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    text=st.lists(_requirements(), min_size=1, max_size=3).map(",".join),
    objects=st.lists(_labels, min_size=1, max_size=6),
)
def test_sql_agrees_with_matches_generated(pg_conn, text: str, objects: list) -> None:
    """For generated selectors and label sets, PostgreSQL and ``matches`` agree."""
    selector = parse_label_selector(text)
    assert parse_label_selector(str(selector)) == selector
    _load(pg_conn, objects)
    expected = {i for i, labels in enumerate(objects) if selector.matches(labels)}
    assert _sql_matches(pg_conn, selector) == expected
