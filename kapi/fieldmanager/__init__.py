"""managedFields: who owns which field, kept on every write; server-side apply.

``FieldManager(schema, api_version, subresource)`` is the entry point; the
registry calls ``update`` on every create and update and ``apply`` for
``application/apply-patch+yaml``. The chain of links is described in
``kapi.fieldmanager.fieldmanager``.
"""

from kapi.fieldmanager.conflicts import ApplyConflicts
from kapi.fieldmanager.fieldmanager import FieldManager, manager_or_user_agent
from kapi.fieldmanager.fieldpath import from_fields_v1, to_fields_v1
from kapi.fieldmanager.managed import (
    Managed,
    decode_managed_fields,
    encode_managed_fields,
)

__all__ = [
    "ApplyConflicts",
    "FieldManager",
    "Managed",
    "decode_managed_fields",
    "encode_managed_fields",
    "from_fields_v1",
    "manager_or_user_agent",
    "to_fields_v1",
]
