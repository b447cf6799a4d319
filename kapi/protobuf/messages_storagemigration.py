"""Protobuf message tables of the storagemigration.k8s.io/v1 API.

Field numbers and types follow k8s.io/api's storagemigration/v1 generated.proto;
JSON names follow the Go json tags. The notation is described in
``kapi.protobuf.schema``.
"""

from __future__ import annotations

from kapi.protobuf.schema import Message

__all__ = ["KINDS", "MESSAGES"]

MESSAGES: dict[str, Message] = {
    "storagemigration.v1.StorageVersionMigration": {
        1: ("metadata", "meta.v1.ObjectMeta"),
        2: ("spec", "storagemigration.v1.StorageVersionMigrationSpec"),
        3: ("status", "storagemigration.v1.StorageVersionMigrationStatus"),
    },
    "storagemigration.v1.StorageVersionMigrationList": {
        1: ("metadata", "meta.v1.ListMeta"),
        2: ("items", "[]storagemigration.v1.StorageVersionMigration"),
    },
    "storagemigration.v1.StorageVersionMigrationSpec": {
        1: ("resource", "meta.v1.GroupResource"),
    },
    "storagemigration.v1.StorageVersionMigrationStatus": {
        1: ("conditions", "[]meta.v1.Condition"),
        2: ("resourceVersion", "string"),
    },
}

# apiVersion -> (message package, kinds registered in it)
KINDS: dict[str, tuple[str, tuple[str, ...]]] = {
    "storagemigration.k8s.io/v1": (
        "storagemigration.v1",
        (
            "StorageVersionMigration",
            "StorageVersionMigrationList",
        ),
    ),
}
