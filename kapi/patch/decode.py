"""Decoding patch and object bodies, reporting duplicate keys while parsing.

kube's strict decoding reports ``duplicate field "metadata.name"``: the JSON is
decoded with an ``object_pairs_hook`` that notes each repeated key of each
object; their paths are resolved once the document is built. YAML (apply bodies)
is decoded with a loader that does the same. YAML's own decoder words them
by line (``line 9: key "foo" already set in map``, yaml.v2's strict error, which
kube reports for YAML bodies and for every apply body, JSON included):
``yaml_duplicate_keys`` gives those.
"""

from __future__ import annotations

import json
import re
from typing import Any

import orjson
import yaml

from kapi.patch.errors import BadPatch

__all__ = ["decode_json", "decode_yaml", "find_paths", "yaml_duplicate_keys"]


def _hook(duplicates: list[tuple[int, str]]):
    def build(pairs: list[tuple[str, Any]]) -> dict:
        out: dict = {}
        for key, value in pairs:
            if key in out:
                duplicates.append((id(out), key))
            out[key] = value
        return out

    return build


def find_paths(doc: Any, duplicates: list[tuple[int, str]]) -> list[str]:
    """Dotted paths of the duplicate keys noted while decoding ``doc``."""
    if not duplicates:
        return []
    where: dict[int, str] = {}

    def walk(node: Any, prefix: str) -> None:
        if isinstance(node, dict):
            where[id(node)] = prefix
            for k, v in node.items():
                walk(v, f"{prefix}.{k}" if prefix else k)
        elif isinstance(node, list):
            for i, v in enumerate(node):
                walk(v, f"{prefix}[{i}]")

    walk(doc, "")
    out = []
    for obj_id, key in duplicates:
        prefix = where.get(obj_id, "")
        path = f"{prefix}.{key}" if prefix else key
        if path not in out:
            out.append(path)
    return out


#: A key's closing quote and its colon (and whatever else looks like one).
_KEY_ENDS = re.compile(rb'"[ \t\n\r]*:')


def _keys(node: Any) -> int | None:
    """How many keys the objects in ``node`` have, all told; None if it holds
    a float (orjson reads an integer past 64 bits as one, ``json`` keeps it
    whole: the slow path decides)."""
    count, todo = 0, [node]
    while todo:
        node = todo.pop()
        if type(node) is dict:
            count += len(node)
            node = node.values()
        for value in node:
            kind = type(value)
            if kind is dict or kind is list:
                todo.append(value)
            elif kind is float:
                return None
    return count


def decode_json(raw: bytes) -> tuple[Any, list[str]]:
    """(document, duplicate field paths).

    orjson first: ten times faster than ``json`` with a hook on every object,
    and every create, update and patch body is decoded here. It keeps the last
    of duplicate keys without saying so; but every key of valid JSON ends in a
    quote and a colon (``_KEY_ENDS``), so when the body holds no more of those
    than the document has keys, no key was repeated (string contents can only
    add to the count, never take from it). Otherwise, or when orjson refuses
    what ``json`` reads (``NaN``, UTF-16, lone surrogates), or the document
    holds a float (``_keys``), the slow path below decodes and names each
    duplicate."""
    if isinstance(raw, bytes):
        try:
            doc = orjson.loads(raw)
        except orjson.JSONDecodeError:
            pass
        else:
            keys = _keys([doc])
            if keys is not None and len(_KEY_ENDS.findall(raw)) <= keys:
                return doc, []
    duplicates: list[tuple[int, str]] = []
    try:
        doc = json.loads(raw, object_pairs_hook=_hook(duplicates))
    except (ValueError, UnicodeDecodeError) as exc:
        raise BadPatch(f"error decoding JSON: {exc}") from None
    return doc, find_paths(doc, duplicates)


class _DuplicateLoader(yaml.SafeLoader):
    pass


def _go_value(key: Any) -> str:
    """A map key as Go's ``%#v`` prints it."""
    if isinstance(key, str):
        return json.dumps(key, ensure_ascii=False)
    if isinstance(key, bool):
        return "true" if key else "false"
    return str(key)


def _construct_mapping(loader: _DuplicateLoader, node: yaml.MappingNode) -> dict:
    loader.flatten_mapping(node)
    out: dict = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        if isinstance(key, list | dict | set):
            # kube's YAML-to-JSON conversion refuses complex keys (``? [a]``).
            raise yaml.constructor.ConstructorError(
                None, None, "found unhashable key", key_node.start_mark
            )
        if key in out:
            loader.kapi_duplicates.append((id(out), str(key)))
            loader.kapi_lines.append(
                f"line {key_node.start_mark.line + 1}: key {_go_value(key)} already set in map"
            )
        out[key] = loader.construct_object(value_node, deep=True)
    return out


_DuplicateLoader.add_constructor(
    yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping
)


def decode_yaml(raw: bytes) -> tuple[Any, list[str]]:
    """(document, duplicate field paths); JSON is tried first, being YAML too."""
    stripped = raw.lstrip()
    if stripped[:1] in (b"{", b"["):
        try:
            return decode_json(raw)
        except BadPatch:
            pass
    doc, duplicates, _ = _load_yaml(raw)
    return doc, find_paths(doc, duplicates)


def _load_yaml(raw: bytes) -> tuple[Any, list[tuple[int, str]], list[str]]:
    try:
        # The reader checks the encoding already when it is made.
        loader = _DuplicateLoader(raw)
    except yaml.YAMLError as exc:
        raise BadPatch(f"error converting YAML to JSON: {exc}") from None
    loader.kapi_duplicates = []
    loader.kapi_lines = []
    try:
        doc = loader.get_single_data()
    except yaml.YAMLError as exc:
        raise BadPatch(f"error converting YAML to JSON: {exc}") from None
    finally:
        loader.dispose()
    return doc, loader.kapi_duplicates, loader.kapi_lines


def yaml_duplicate_keys(raw: bytes) -> list[str]:
    """yaml.v2's strict errors for ``raw`` (``line N: key "k" already set in
    map``), empty when it has no duplicate keys or does not load as YAML."""
    try:
        return _load_yaml(raw)[2]
    except (BadPatch, RecursionError):
        return []
