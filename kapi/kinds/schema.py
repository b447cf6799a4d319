"""``SchemaStrategy``: a type's strategy wrapped with its published schema.

Every built-in kind is served through one of these: unknown fields are pruned
(and reported for ``fieldValidation``), the object is validated against the
kind's definition from ``kapi.registry.definitions`` with ``jsonschema``, after
kube's scheme defaults (``defaulters``), on every write; the wrapped strategy adds
the rules the schema cannot say (a Deployment's selector must match its
template) and the table columns.
"""

from __future__ import annotations

from typing import Any

from kapi.errors import Cause
from kapi.kinds.defaulters import set_defaults
from kapi.kinds.scale import ScalePaths
from kapi.registry.decodeerrors import decode_error
from kapi.registry.definitions import definitions
from kapi.registry.schemavalidation import schema_causes, validator_for_definition
from kapi.registry.strategy import Column, Object, Strategy
from kapi.registry.structural import prune

__all__ = ["SchemaStrategy"]


class SchemaStrategy(Strategy):
    """Delegates every hook to ``inner`` and adds schema pruning and validation."""

    def __init__(
        self,
        inner: Strategy,
        definition: str | None,
        status_subresource: bool = False,
        scale: ScalePaths | None = None,
    ) -> None:
        self.inner = inner
        self.definition = definition
        self.status_subresource = status_subresource or inner.status_subresource
        self.allow_create_on_update = inner.allow_create_on_update
        self.allow_unconditional_update = inner.allow_unconditional_update
        self.orphan_by_default = inner.orphan_by_default
        self.status_metadata = inner.status_metadata
        self.serialize_writes = inner.serialize_writes
        self.return_deleted_object = inner.return_deleted_object
        self.scale = scale
        inner.status_subresource = self.status_subresource

    # -- schema ------------------------------------------------------------------
    def prune(self, obj: Object) -> list[str]:
        """Drop fields the definition does not describe; their paths. MUTATES ``obj``."""
        if self.definition is None:
            return []
        return prune(obj, definitions()[self.definition], crd=False)

    def default(self, obj: Object) -> None:
        """What kube's decoding does to every object a write sends: prune, then
        the scheme's defaults (``kapi.kinds.defaulters``). MUTATES ``obj``."""
        self.prune(obj)
        set_defaults(obj, self.definition)

    def _schema(self, obj: Object) -> list[Cause]:
        if self.definition is None:
            return []
        body = {**obj, "metadata": {}}
        return schema_causes(validator_for_definition(self.definition), body)

    # -- writes --------------------------------------------------------------------
    def prepare_for_create(self, obj: Object) -> None:
        """Prune and default, then the inner preparation. MAY mutate ``obj``."""
        self.default(obj)
        self.inner.prepare_for_create(obj)

    def prepare_for_update(self, obj: Object, old: Object) -> None:
        """Prune and default, then the inner carry-over. MAY mutate ``obj``."""
        self.default(obj)
        self.inner.prepare_for_update(obj, old)

    def prepare_for_status_update(self, obj: Object, old: Object) -> None:
        self.default(obj)
        self.inner.prepare_for_status_update(obj, old)

    def validate(self, obj: Object) -> list[Cause]:
        """Schema violations plus the type's rules, as kube reports both. Does not
        mutate. The rules may trip over a mistyped object; then the schema's
        causes stand alone. A wrong JSON type is kube's decode error (400
        BadRequest, ``kapi.registry.decodeerrors``), raised."""
        return self._with_rules(self._decoded(obj), lambda: self.inner.validate(obj))

    def validate_update(self, obj: Object, old: Object) -> list[Cause]:
        return self._with_rules(
            self._decoded(obj), lambda: self.inner.validate_update(obj, old)
        )

    def _decoded(self, obj: Object) -> list[Cause]:
        causes = self._schema(obj)
        error = decode_error(self.definition, causes)
        if error is not None:
            raise error
        return causes

    @staticmethod
    def _with_rules(causes: list[Cause], rules) -> list[Cause]:
        try:
            extra = rules()
        except (AttributeError, KeyError, TypeError, ValueError):
            if not causes:
                raise
            return causes
        seen = {c.field for c in causes}
        return causes + [c for c in extra if c.field not in seen]

    def warnings(self, obj: Object) -> list[str]:
        return self.inner.warnings(obj)

    def prepare_for_subresource_update(self, subresource: str, obj: Object, old: Object) -> None:
        self.default(obj)
        self.inner.prepare_for_subresource_update(subresource, obj, old)

    def pending_finalizers(self, obj: Object) -> bool:
        return self.inner.pending_finalizers(obj)

    def prepare_for_graceful_delete(self, obj: Object) -> None:
        self.inner.prepare_for_graceful_delete(obj)

    def check_delete(self, obj: Object) -> None:
        self.inner.check_delete(obj)

    # -- versions and reads ------------------------------------------------------------
    def to_storage(self, obj: Object, version: str) -> Object:
        return self.inner.to_storage(obj, version)

    def from_storage(self, obj: Object, version: str) -> Object:
        return self.inner.from_storage(obj, version)

    def conversion_key(self, version: str) -> str:
        return self.inner.conversion_key(version)

    def serves_stored_form(self, version: str) -> bool:
        return self.inner.serves_stored_form(version)

    def storage_field(self, path: str) -> str:
        return self.inner.storage_field(path)

    def field_value(self, obj: Object, path: str) -> str:
        return self.inner.field_value(obj, path)

    def table_columns(self) -> list[Column]:
        return self.inner.table_columns()

    def table_cells(self, obj: Object) -> list[Any]:
        return self.inner.table_cells(obj)

    def table_definition(self) -> list[Column]:
        return self.inner.table_definition()

    def table_row_cells(self, obj: Object) -> list[Any]:
        return self.inner.table_row_cells(obj)
