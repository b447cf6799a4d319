"""Type schemas for merge, apply and field validation.

``schema_for(rt)`` returns the ``TypeSchema`` of a resource type: from
``rt.extra["openapi_schema"]`` (custom resources) or from Kubernetes' published
definitions (built-in types). ``None`` means the type has no schema: lists are
atomic, maps granular and unknown fields are not checked.
"""

from kapi.schema.builtin import builtin_definitions, schema_for
from kapi.schema.typeschema import TypeSchema

__all__ = ["TypeSchema", "builtin_definitions", "schema_for"]
