"""Selections in SQL: label and field selectors as PostgreSQL predicates.

Callers hand storage the parsed selectors (``kapi.selectors``: kube's grammar,
matching in Python); only storage knows they become predicates over the
``labels`` column (``jsonb``, GIN-indexed) and the object's JSON. Each
predicate is a ``str.format`` template naming the labels as ``{labels}`` and
the object as ``{data}``, with ``%s`` parameters for psycopg, so the same text
runs against current rows and past ones from the change log.
"""

from __future__ import annotations

import json
import re
from typing import Any

from kapi.selectors import FieldRequirement, FieldSelector, LabelSelector, Requirement
from kapi.selectors.labels import (
    DOES_NOT_EXIST,
    DOUBLE_EQUALS,
    EQUALS,
    EXISTS,
    GREATER_THAN,
    IN,
    LESS_THAN,
    NOT_EQUALS,
    NOT_IN,
    parse_int64,
)

__all__ = ["COLUMNS", "field_predicates", "label_predicates"]

#: Fields stored as columns of their own (the rest are read from the JSON).
COLUMNS = {"metadata.name": "name", "metadata.namespace": "namespace"}

_SQL_PATH_SEGMENT = re.compile(r"[A-Za-z0-9_-]+", re.ASCII)
Predicates = tuple[list[str], list[Any]]


def label_predicates(selector: LabelSelector) -> Predicates:
    """Predicates (to AND together) over ``{labels}`` and their parameters in order."""
    if selector.nothing:
        return ["false"], []
    predicates: list[str] = []
    params: list[Any] = []
    for requirement in selector.requirements:
        sql, args = _label_requirement(requirement)
        predicates.append(sql)
        params.extend(args)
    return predicates, params


def _label_requirement(r: Requirement) -> tuple[str, list[Any]]:
    op = r.operator
    if op in (IN, EQUALS, DOUBLE_EQUALS, NOT_IN, NOT_EQUALS):
        # Containment per value keeps each disjunct GIN-indexable (BitmapOr).
        terms = " OR ".join(["{labels} @> %s::jsonb"] * len(r.values))
        params = [json.dumps({r.key: v}) for v in r.values]
        if len(r.values) > 1:
            terms = f"({terms})"
        if op in (NOT_IN, NOT_EQUALS):
            # NULL labels (no labels at all) must match a negative requirement.
            return f"NOT COALESCE({terms}, false)", params
        return terms, params
    if op == EXISTS:
        return "{labels} ? %s", [r.key]
    if op == DOES_NOT_EXIST:
        return "NOT COALESCE({labels} ? %s, false)", [r.key]
    if op in (GREATER_THAN, LESS_THAN):
        want = parse_int64(r.values[0]) if len(r.values) == 1 else None
        if want is None:
            return "false", []
        symbol = ">" if op == GREATER_THAN else "<"
        # CASE guarantees the cast only runs on values shaped like integers;
        # the range check mirrors ParseInt rejecting int64 overflow.
        sql = (
            "CASE WHEN ({labels} ->> %s) ~ '^[+-]?[0-9]+$' THEN "
            "({labels} ->> %s)::numeric BETWEEN -9223372036854775808 AND 9223372036854775807 "
            f"AND ({{labels}} ->> %s)::numeric {symbol} %s::numeric ELSE false END"
        )
        return sql, [r.key, r.key, r.key, want]
    return "false", []


def field_predicates(selector: FieldSelector, columns: dict[str, str] = COLUMNS) -> Predicates:
    """Predicates (to AND together) and their parameters in order: ``columns``
    maps a field to a non-null text SQL expression; other fields are read from
    the object JSON named by ``{data}``."""
    predicates: list[str] = []
    params: list[Any] = []
    for requirement in selector.requirements:
        sql, args = _field_requirement(requirement, columns)
        predicates.append(sql)
        params.extend(args)
    return predicates, params


def _field_requirement(r: FieldRequirement, columns: dict[str, str]) -> tuple[str, list[Any]]:
    expression = columns.get(r.field)
    if expression is None:
        segments = r.path.split(".")
        if not all(_SQL_PATH_SEGMENT.fullmatch(s) for s in segments):
            # The path is spliced into SQL (so an expression index can match);
            # it comes from the resource's declaration, never from the request.
            raise ValueError(f"field path {r.path!r} is not safe to embed in SQL")
        if not _SQL_PATH_SEGMENT.fullmatch(r.missing or "x"):
            raise ValueError(f"missing value {r.missing!r} is not safe to embed in SQL")
        expression = f"COALESCE({{data}} #>> '{{{{{','.join(segments)}}}}}', '{r.missing}')"
    sql_op = "=" if r.operator == "=" else "<>"
    return f"{expression} {sql_op} %s", [r.value]
