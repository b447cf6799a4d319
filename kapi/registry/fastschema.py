"""A compiled validity check for JSON Schema 2020-12, in front of ``jsonschema``.

Nearly every write is valid, and ``jsonschema`` spends most of a valid
object's time on its machinery (a new validator per descent, keyword lookups,
type-checker dispatch): for a 1 KiB ConfigMap about a tenth of the request's
CPU. :func:`compile_schema` turns a schema, once, into nested closures that
answer one question: *is this value certainly valid?*

The check is conservative. It answers True only when ``jsonschema`` would
report no error; anything it does not model (a keyword it does not implement,
``not``, an enum of non-strings, a float where an integer is
asked, a format check that raises) makes it answer False, and the caller then
runs ``jsonschema`` as before, which finds the errors and words them. So the
errors, their order and their wording never come from here.

Keywords modelled: ``type``, ``enum`` (strings and null), ``const`` (strings),
``required``, ``properties``, ``additionalProperties``, ``items`` (one schema),
``allOf``, ``anyOf``, ``oneOf`` (when the other branches' ``type`` rules the value
out, as in IntOrString and Quantity), ``$ref`` to ``#/$defs/...``, ``format`` (the same
``FormatChecker``), ``pattern``, ``minLength``/``maxLength``,
``minItems``/``maxItems``, ``minProperties``/``maxProperties``,
``minimum``/``maximum``. Annotations (``description``, ``default``, ...) and
keywords ``jsonschema`` ignores (``x-kubernetes-*``, ``discriminator``) are
skipped, as ``jsonschema`` skips them.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from jsonschema import FormatChecker

__all__ = ["Check", "compile_schema"]

Check = Callable[[Any], bool]

#: Keywords JSON Schema 2020-12 validates (``jsonschema``'s validators for the
#: draft). A schema using one that is not modelled below is never "certainly valid".
_VALIDATING = frozenset({
    "$ref", "$dynamicRef", "additionalProperties", "allOf", "anyOf", "const", "contains",
    "dependentRequired", "dependentSchemas", "enum", "exclusiveMaximum", "exclusiveMinimum",
    "format", "if", "items", "maxContains", "maxItems", "maxLength", "maxProperties",
    "maximum", "minContains", "minItems", "minLength", "minProperties", "minimum",
    "multipleOf", "not", "oneOf", "pattern", "patternProperties", "prefixItems",
    "properties", "propertyNames", "required", "type", "unevaluatedItems",
    "unevaluatedProperties", "uniqueItems",
})
_MODELLED = frozenset({
    "$ref", "additionalProperties", "allOf", "anyOf", "const", "enum", "format", "items",
    "maxItems", "maxLength", "maxProperties", "maximum", "minItems", "minLength",
    "minProperties", "minimum", "oneOf", "pattern", "properties", "required", "type",
})


def _never(_value: Any) -> bool:
    return False


def _always(_value: Any) -> bool:
    return True


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


_TYPES: dict[str, Check] = {
    "string": lambda v: isinstance(v, str),
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    # A float that is a whole number is an integer to jsonschema: not modelled.
    "integer": _is_int,
    "number": _is_number,
}


def _json_types(v: Any) -> frozenset[str]:
    """Every JSON Schema type ``v`` is an instance of, as jsonschema decides it."""
    if v is None:
        return _NULL
    if isinstance(v, bool):
        return _BOOLEAN
    if isinstance(v, int):
        return _INTEGER
    if isinstance(v, float):
        return _INTEGER if v.is_integer() else _NUMBER
    if isinstance(v, str):
        return _STRING
    if isinstance(v, dict):
        return _OBJECT
    if isinstance(v, list):
        return _ARRAY
    return frozenset()


_NULL, _BOOLEAN, _STRING = frozenset({"null"}), frozenset({"boolean"}), frozenset({"string"})
_INTEGER, _NUMBER = frozenset({"integer", "number"}), frozenset({"number"})
_OBJECT, _ARRAY = frozenset({"object"}), frozenset({"array"})


class _Compiler:
    def __init__(self, root: dict, format_checker: FormatChecker | None) -> None:
        self.defs = root.get("$defs") or {}
        self.format_checker = format_checker
        self.refs: dict[str, Check] = {}

    def ref(self, target: Any) -> Check:
        if not isinstance(target, str) or not target.startswith("#/$defs/"):
            return _never
        name = target[len("#/$defs/"):]
        if "/" in name or "~" in name or name not in self.defs:
            return _never
        if name not in self.refs:
            # A placeholder first: definitions refer to themselves (JSONSchemaProps).
            slot: list[Check] = [_never]
            self.refs[name] = lambda v: slot[0](v)
            slot[0] = self.compile(self.defs[name])
        return self.refs[name]

    def compile(self, schema: Any) -> Check:
        if schema is True:
            return _always
        if not isinstance(schema, dict):
            return _never
        if any(k in _VALIDATING and k not in _MODELLED for k in schema):
            return _never
        checks: list[Check] = []
        if "type" in schema:
            checks.append(self._type(schema["type"]))
        if "enum" in schema:
            checks.append(self._enum(schema["enum"]))
        if "const" in schema:
            checks.append(self._enum([schema["const"]]))
        if "format" in schema and self.format_checker is not None:
            checks.append(self._format(schema["format"]))
        for check in (self._string(schema), self._numeric(schema), self._sizes(schema)):
            if check is not None:
                checks.append(check)
        if any(k in schema for k in ("properties", "additionalProperties", "required")):
            checks.append(self._object(schema))
        if "items" in schema:
            checks.append(self._items(schema["items"]))
        if "$ref" in schema:
            checks.append(self.ref(schema["$ref"]))
        if "allOf" in schema:
            parts = [self.compile(s) for s in schema["allOf"]] if isinstance(schema["allOf"], list) else [_never]
            checks.append(lambda v: all(p(v) for p in parts))
        if "anyOf" in schema:
            # One branch certainly valid makes the whole certainly valid.
            options = [self.compile(s) for s in schema["anyOf"]] if isinstance(schema["anyOf"], list) else []
            checks.append(lambda v: any(o(v) for o in options))
        if "oneOf" in schema:
            checks.append(self._one_of(schema["oneOf"]))
        if not checks:
            return _always
        if len(checks) == 1:
            return checks[0]
        return lambda v: all(c(v) for c in checks)

    def _one_of(self, branches: Any) -> Check:
        """Certainly valid: one branch certainly valid, every other certainly
        not, which only its ``type`` can tell here."""
        if not isinstance(branches, list):
            return _never
        compiled = []
        for branch in branches:
            spec = branch.get("type") if isinstance(branch, dict) else None
            names = [spec] if isinstance(spec, str) else spec
            allowed = frozenset(names) if isinstance(names, list) else None
            compiled.append((self.compile(branch), allowed))

        def check(v: Any) -> bool:
            types = _json_types(v)
            valid = 0
            for each, allowed in compiled:
                if allowed is not None and not (allowed & types):
                    continue  # certainly invalid: the wrong type
                if not each(v):
                    return False  # maybe valid, maybe not: let jsonschema count
                valid += 1
            return valid == 1

        return check

    @staticmethod
    def _type(spec: Any) -> Check:
        names = [spec] if isinstance(spec, str) else spec
        if not isinstance(names, list) or any(n not in _TYPES for n in names):
            return _never
        tests = [_TYPES[n] for n in names]
        if len(tests) == 1:
            return tests[0]
        return lambda v: any(t(v) for t in tests)

    @staticmethod
    def _enum(values: Any) -> Check:
        if not isinstance(values, list) or not all(v is None or isinstance(v, str) for v in values):
            return _never
        strings = frozenset(v for v in values if isinstance(v, str))
        null = None in values
        return lambda v: (v is None and null) or (isinstance(v, str) and v in strings)

    def _format(self, name: Any) -> Check:
        checker = self.format_checker

        def check(v: Any) -> bool:
            try:
                return checker.conforms(v, name)
            except Exception:  # noqa: BLE001 - jsonschema will report it as it does
                return False

        return check

    @staticmethod
    def _string(schema: dict) -> Check | None:
        pattern, low, high = schema.get("pattern"), schema.get("minLength"), schema.get("maxLength")
        if pattern is None and low is None and high is None:
            return None
        try:
            regex = re.compile(pattern) if pattern is not None else None
        except (re.error, TypeError):
            return _never
        if (low is not None and not _is_int(low)) or (high is not None and not _is_int(high)):
            return _never

        def check(v: Any) -> bool:
            if not isinstance(v, str):
                return True
            if low is not None and len(v) < low:
                return False
            if high is not None and len(v) > high:
                return False
            return regex is None or regex.search(v) is not None

        return check

    @staticmethod
    def _numeric(schema: dict) -> Check | None:
        low, high = schema.get("minimum"), schema.get("maximum")
        if low is None and high is None:
            return None
        if (low is not None and not _is_number(low)) or (high is not None and not _is_number(high)):
            return _never
        return lambda v: not _is_number(v) or (
            (low is None or v >= low) and (high is None or v <= high)
        )

    @staticmethod
    def _sizes(schema: dict) -> Check | None:
        bounds = {k: schema.get(k) for k in ("minItems", "maxItems", "minProperties", "maxProperties")}
        if all(b is None for b in bounds.values()):
            return None
        if any(b is not None and not _is_int(b) for b in bounds.values()):
            return _never

        def check(v: Any) -> bool:
            if isinstance(v, list):
                low, high = bounds["minItems"], bounds["maxItems"]
            elif isinstance(v, dict):
                low, high = bounds["minProperties"], bounds["maxProperties"]
            else:
                return True
            return (low is None or len(v) >= low) and (high is None or len(v) <= high)

        return check

    def _object(self, schema: dict) -> Check:
        properties = schema.get("properties", {})
        required = schema.get("required", [])
        if not isinstance(properties, dict) or not isinstance(required, list):
            return _never
        known = {name: self.compile(sub) for name, sub in properties.items()}
        additional = schema.get("additionalProperties", True)
        extra = None if additional is True else self.compile(additional)

        def check(v: Any) -> bool:
            if not isinstance(v, dict):
                return True
            for name in required:
                if name not in v:
                    return False
            for name, value in v.items():
                sub = known.get(name)
                if sub is not None:
                    if not sub(value):
                        return False
                elif extra is not None and not extra(value):
                    return False
            return True

        return check

    def _items(self, items: Any) -> Check:
        each = self.compile(items)
        return lambda v: not isinstance(v, list) or all(each(x) for x in v)


def compile_schema(schema: Any, format_checker: FormatChecker | None = None) -> Check:
    """``check(value)``: True only if ``value`` certainly satisfies ``schema``
    (a root: its ``$defs`` resolve ``$ref``). Compiles once; thread-safe to call."""
    compiler = _Compiler(schema if isinstance(schema, dict) else {}, format_checker)
    return compiler.compile(schema)
