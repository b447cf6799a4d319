"""Secret: base64 ``data``, write-only ``stringData``, an immutable ``type``."""

from __future__ import annotations

import base64
import binascii

from kapi.errors import Cause
from kapi.kinds.configmaps import validate_config_key, validate_immutable_data
from kapi.kinds.defaulting import default_string
from kapi.registry.strategy import Column, Object, Strategy

__all__ = ["SecretStrategy"]

MAX_SECRET_SIZE = 1024 * 1024

#: Keys each well-known type requires (kube's ValidateSecret).
REQUIRED_KEYS = {
    "kubernetes.io/dockercfg": (".dockercfg",),
    "kubernetes.io/dockerconfigjson": (".dockerconfigjson",),
    "kubernetes.io/basic-auth": (),
    "kubernetes.io/ssh-auth": ("ssh-privatekey",),
    "kubernetes.io/tls": ("tls.crt", "tls.key"),
}


class SecretStrategy(Strategy):
    def prepare_for_create(self, obj: Object) -> None:
        default_string(obj, "type", "Opaque")
        self._merge_string_data(obj)

    def prepare_for_update(self, obj: Object, old: Object) -> None:
        super().prepare_for_update(obj, old)
        if not obj.get("type"):
            obj["type"] = old.get("type", "Opaque")
        self._merge_string_data(obj)

    @staticmethod
    def _merge_string_data(obj: Object) -> None:
        """``stringData`` entries overwrite ``data`` (kube does this when decoding)."""
        string_data = obj.pop("stringData", None)
        if isinstance(string_data, dict) and string_data:
            data = dict(obj.get("data") or {})
            for key, value in string_data.items():
                if isinstance(value, str):
                    data[key] = base64.b64encode(value.encode()).decode()
                else:
                    data[key] = value  # left for validate() to refuse
            obj["data"] = data

    def validate(self, obj: Object) -> list[Cause]:
        causes: list[Cause] = []
        data = obj.get("data") or {}
        if not isinstance(data, dict):
            return [Cause("FieldValueTypeInvalid", "Invalid value: must be an object", "data")]
        size = 0
        for key, value in data.items():
            causes += validate_config_key(key, f"data[{key}]")
            if not isinstance(value, str):
                causes.append(Cause("FieldValueTypeInvalid", "Invalid value: must be a string", f"data[{key}]"))
                continue
            try:
                size += len(base64.b64decode(value, validate=True))
            except (binascii.Error, ValueError):
                causes.append(
                    Cause(
                        "FieldValueInvalid",
                        f'Invalid value: "{value[:32]}": illegal base64 data',
                        f"data[{key}]",
                    )
                )
        if size > MAX_SECRET_SIZE:
            causes.append(Cause("FieldValueTooLong", f"Too long: must have at most {MAX_SECRET_SIZE} bytes", "data"))
        secret_type = obj.get("type", "Opaque")
        if not isinstance(secret_type, str):
            causes.append(Cause("FieldValueTypeInvalid", "Invalid value: must be a string", "type"))
        else:
            for required in REQUIRED_KEYS.get(secret_type, ()):
                if required not in data:
                    causes.append(Cause("FieldValueRequired", "Required value", f"data[{required}]"))
            if secret_type == "kubernetes.io/service-account-token":
                annotations = (obj.get("metadata") or {}).get("annotations") or {}
                if not annotations.get("kubernetes.io/service-account.name"):
                    causes.append(
                        Cause(
                            "FieldValueRequired",
                            "Required value",
                            "metadata.annotations[kubernetes.io/service-account.name]",
                        )
                    )
        return causes

    def validate_update(self, obj: Object, old: Object) -> list[Cause]:
        causes = self.validate(obj)
        if obj.get("type") != old.get("type"):
            causes.append(
                Cause("FieldValueInvalid", f'Invalid value: "{obj.get("type")}": field is immutable', "type")
            )
        return causes + validate_immutable_data(obj, old, ("data",))

    def table_columns(self) -> list[Column]:
        return [
            Column("Type", description="The type of the secret"),
            Column("Data", type="integer", description="The number of data entries in the secret"),
        ]

    def table_cells(self, obj: Object) -> list:
        return [obj.get("type", ""), len(obj.get("data") or {})]
