"""The static side of CEL rules: the parser accepts the CEL that kube's CRDs use
(a CRD must never be refused because our parser is narrower than CEL), and the
cost estimate separates bounded from unbounded work as kube's does."""

from __future__ import annotations

import cel
import pytest

from kapi.cel import cost as costs
from kapi.cel.parser import ParseError, parse
from kapi.cel.rewrite import rewritten
from kapi.cel.rules import compile_rules

ACCEPTED = [
    "self.replicas <= self.maxReplicas",
    "has(self.a.b) ? self.a.b.size() > 0 : !has(self.c)",
    "self.items.all(i, i.name.startsWith('x') && i.port in [80, 443])",
    "self.list.exists_one(x, x == 1) || self.list.map(x, x * 2).filter(y, y > 4).size() == 0",
    "self.m.all(k, self.m[k] != '') && 'key' in self.m",
    "self.s.matches(r'^[a-z]+\\d*$') && self.s.matches('''^x$''')",
    'self.s == "double \\"quoted\\"" || self.b == b\'\\x00abc\'',
    "-self.n < 0 && !(self.n % 2 == 0) && 1.5e3 > 2.0 && 0x1F == 31 && 3u == 3u",
    "{'a': 1, 'b': [1, 2,]}['b'][1] == 2",
    "duration('1h') > duration('30m') && timestamp('2020-01-01T00:00:00Z').getFullYear() == 2020",
    "type(self.x) == int || type(self.x) == string",
    "quantity(self.q).isLessThan(quantity('1Gi')) && cidr('10.0.0.0/8').containsIP(ip(self.ip))",
    "math.greatest([1, 2]) == 2 && optional.of(1).hasValue() && url(self.u).getHost() != ''",
    "self.l.sum() + self.l.min() + self.l.max() > 0 && self.l.isSorted() && self.l.indexOf(1) >= -1",
    "'%s-%d'.format([self.s, self.n]).size() > 0 && self.s.split(',').join('-').lowerAscii() != ''",
    "self.metadata.name.startsWith('web-')",
]


@pytest.mark.parametrize("rule", ACCEPTED)
def test_parser_accepts_what_cel_compiles(rule):
    cel.compile(rule)  # the evaluator agrees it is CEL
    parse(rule)


@pytest.mark.parametrize(
    "rule", ["self.a <=", "self.(a)", "[1, 2", "self.a ? 1", "'open"]
)
def test_parser_refuses_what_is_not_cel(rule):
    with pytest.raises(ParseError):
        parse(rule)


def _schema(rule: str, field: dict) -> dict:
    return {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "properties": {"f": field},
                "x-kubernetes-validations": [{"rule": rule}],
            }
        },
    }


@pytest.mark.parametrize(
    ("field", "refused"),
    [
        ({"type": "array", "items": {"type": "string"}}, True),
        (
            {
                "type": "array",
                "maxItems": 10,
                "items": {"type": "string", "maxLength": 64},
            },
            False,
        ),
    ],
)
def test_quadratic_rule_needs_bounds(field, refused):
    rule = "self.f.all(a, self.f.exists(b, a.contains(b)))"
    causes = compile_rules(_schema(rule, field), "s")
    assert bool(causes) == refused, causes
    if refused:
        assert causes[0].message.startswith(
            "Forbidden: estimated rule cost exceeds budget by factor of more than 100x"
        )


def test_runtime_estimate_follows_the_actual_sizes():
    ast = parse("self.all(x, self.all(y, x != y || true))")
    small, _ = costs.estimate(ast, {"self": costs.shape_of_value(list(range(10)))})
    large, _ = costs.estimate(ast, {"self": costs.shape_of_value(list(range(1000)))})
    assert small < 1_000 < costs.PER_CALL_LIMIT < large


def test_cost_message_factors():
    assert "factor of 2.5x" in costs.cost_message("x", 25, 10)
    assert "factor of 1.200000x" in costs.cost_message("x", 12, 10)
    assert "factor of more than 100x" in costs.cost_message("x", 2000, 10)


@pytest.mark.parametrize(
    ("rule", "value", "expected"),
    [
        ("self.?a.?b.orValue(5)", {"a": {"b": 1}}, 1),
        ("self.?a.?b.orValue(5)", {"a": {}}, 5),
        ("self.?a.?b.orValue(5)", {}, 5),
        ("self.?a.b.orValue(5)", {}, 5),
        ("self.m[?'k'].orValue('none')", {"m": {"k": "v"}}, "v"),
        ("self.l[?3].hasValue()", {"l": [1]}, False),
        ("self.?a.hasValue() == has(self.a)", {"a": 1}, True),
    ],
)
def test_optional_syntax_runs_through_the_rewrite(rule, value, expected):
    """The cel package does not parse ``.?``/``[?``; the rewrite keeps CEL's meaning."""
    from kapi.cel.library import new_context

    program = cel.compile(rewritten(parse(rule)))
    assert program.execute(new_context({"self": value})) == expected


def test_rewrite_keeps_literals_as_written():
    source = (
        "self.?x.orValue(1u) == 1u && r'\\d' != '' && b'\\x00' != b'' && 0x1F == 31"
    )
    assert "1u" in rewritten(parse(source)) and "0x1F" in rewritten(parse(source))


def test_crd_update_ratchets_rules_of_unchanged_versions():
    """A CRD stored under older checks can still be updated (labels, status)
    while its schema is unchanged; changing the schema applies the checks."""
    from kapi.kinds.customresourcedefinitions import (
        CustomResourceDefinitionStrategy,
    )

    rule = "self.f.all(a, self.f.exists(b, a.contains(b)))"
    crd = {
        "metadata": {"name": "things.r.example.com"},
        "spec": {
            "group": "r.example.com",
            "scope": "Namespaced",
            "names": {"plural": "things", "kind": "Thing"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": _schema(
                            rule, {"type": "array", "items": {"type": "string"}}
                        )
                    },
                }
            ],
        },
    }
    strategy = CustomResourceDefinitionStrategy()
    assert strategy.validate(crd)  # too expensive for a new CRD
    assert strategy.validate_update(crd, crd) == []
    changed = {
        **crd,
        "spec": {**crd["spec"], "versions": [dict(crd["spec"]["versions"][0])]},
    }
    changed["spec"]["versions"][0]["schema"] = {
        "openAPIV3Schema": _schema(
            rule + " || true", {"type": "array", "items": {"type": "string"}}
        )
    }
    assert strategy.validate_update(changed, crd)


@pytest.mark.parametrize(
    ("rule", "expected"),
    [
        ("size(self.s) == 5", True),
        ("self.s.size() == 5 && size(self.l) == 2 && self.m.size() == 1", True),
        ("size(b'ab') == 2 && size('') == 0", True),
    ],
)
def test_size_counts_code_points(rule, expected):
    """CEL's size() of a string counts code points; the cel package counts bytes."""
    from kapi.cel.library import new_context
    from kapi.cel.rules import _compiled

    value = {"s": "héllo", "l": [1, 2], "m": {"k": 1}}
    assert _compiled(rule).program.execute(new_context({"self": value})) is expected
