"""ConfigMap: string ``data`` and base64 ``binaryData`` under config-key names."""

from __future__ import annotations

import base64
import binascii
import re

from kapi.errors import Cause
from kapi.registry.strategy import Column, Object, Strategy

__all__ = ["ConfigMapStrategy", "validate_config_key", "validate_immutable_data"]

_CONFIG_KEY = re.compile(r"^[-._a-zA-Z0-9]+$")
MAX_CONFIG_SIZE = 1024 * 1024


def validate_config_key(key: str, field: str) -> list[Cause]:
    """kube's ``IsConfigMapKey``."""
    problems = []
    if len(key) > 253:
        problems.append("must be no more than 253 characters")
    if not _CONFIG_KEY.match(key):
        problems.append(
            "a valid config key must consist of alphanumeric characters, '-', '_' or '.' "
            "(e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation "
            "is '[-._a-zA-Z0-9]+')"
        )
    if key in (".", ".."):
        problems.append(f"must not be '{key}'")
    elif key.startswith(".."):
        problems.append("must not start with '..'")
    return [Cause("FieldValueInvalid", f'Invalid value: "{key}": {p}', field) for p in problems]


def validate_immutable_data(obj: Object, old: Object, fields: tuple[str, ...]) -> list[Cause]:
    """``immutable: true`` objects refuse changes to their data (and to ``immutable``)."""
    causes = []
    if old.get("immutable") is True:
        if obj.get("immutable") is not True:
            causes.append(
                Cause("FieldValueForbidden", "Forbidden: field is immutable when `immutable` is set", "immutable")
            )
        for f in fields:
            if (obj.get(f) or {}) != (old.get(f) or {}):
                causes.append(
                    Cause("FieldValueForbidden", "Forbidden: field is immutable when `immutable` is set", f)
                )
    return causes


class ConfigMapStrategy(Strategy):
    def validate(self, obj: Object) -> list[Cause]:
        causes: list[Cause] = []
        data = obj.get("data") or {}
        binary = obj.get("binaryData") or {}
        if not isinstance(data, dict):
            return [Cause("FieldValueTypeInvalid", "Invalid value: must be an object", "data")]
        if not isinstance(binary, dict):
            return [Cause("FieldValueTypeInvalid", "Invalid value: must be an object", "binaryData")]
        size = 0
        for key, value in data.items():
            causes += validate_config_key(key, f"data[{key}]")
            if not isinstance(value, str):
                causes.append(
                    Cause("FieldValueTypeInvalid", "Invalid value: must be a string", f"data[{key}]")
                )
                continue
            size += len(value.encode())
        for key, value in binary.items():
            causes += validate_config_key(key, f"binaryData[{key}]")
            if key in data:
                causes.append(
                    Cause(
                        "FieldValueDuplicate",
                        f'Duplicate value: "{key}"',
                        f"binaryData[{key}]",
                    )
                )
            try:
                size += len(base64.b64decode(value, validate=True))
            except (binascii.Error, TypeError, ValueError):
                causes.append(
                    Cause("FieldValueInvalid", "Invalid value: illegal base64 data", f"binaryData[{key}]")
                )
        if size > MAX_CONFIG_SIZE:
            causes.append(
                Cause("FieldValueTooLong", f"Too long: must have at most {MAX_CONFIG_SIZE} bytes", "")
            )
        if "immutable" in obj and not isinstance(obj["immutable"], bool):
            causes.append(Cause("FieldValueTypeInvalid", "Invalid value: must be a boolean", "immutable"))
        return causes

    def validate_update(self, obj: Object, old: Object) -> list[Cause]:
        return self.validate(obj) + validate_immutable_data(obj, old, ("data", "binaryData"))

    def table_columns(self) -> list[Column]:
        return [Column("Data", type="integer", description="Number of data entries")]

    def table_cells(self, obj: Object) -> list:
        return [len(obj.get("data") or {}) + len(obj.get("binaryData") or {})]
