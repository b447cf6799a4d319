"""The innermost link: ownership by field sets (structured-merge-diff's ``Updater``).

``update`` gives the writer every field it added or changed, taking them from
other managers (a non-apply write always wins); ``apply`` merges the
configuration, refuses to change fields others own unless forced, and prunes
fields the applier dropped that nobody else owns.
"""

from __future__ import annotations

from kapi.fieldmanager import typed
from kapi.fieldmanager.conflicts import ApplyConflicts
from kapi.fieldmanager.fieldpath import FieldSet
from kapi.fieldmanager.interface import Manager, Object
from kapi.fieldmanager.managed import Managed, VersionedSet
from kapi.schema import TypeSchema

__all__ = ["StructuredMergeManager"]


class StructuredMergeManager(Manager):
    def __init__(
        self,
        schema: TypeSchema | None,
        api_version: str,
        reset_fields: frozenset[str] = frozenset(),
    ) -> None:
        self.schema = schema
        self.api_version = api_version
        # Top-level fields this endpoint's writers never own (kube's reset fields:
        # status for the main resource, spec for /status).
        self.reset = frozenset("f:" + f for f in reset_fields)

    def _filter(self, fields: FieldSet) -> FieldSet:
        if not self.reset:
            return fields
        return {p for p in fields if p[:1] and p[0] not in self.reset}

    def _update_others(
        self, live: Object, new: Object, managed: Managed, manager: str, force: bool
    ) -> tuple[FieldSet, FieldSet, FieldSet]:
        """Takes the fields ``new`` changes from the other managers (MUTATES
        ``managed``); returns (added, modified, removed). Returned, not kept on
        ``self``: one manager serves every request thread of its type."""
        added, modified, removed = (
            self._filter(s) for s in typed.compare(live, new, self.schema)
        )
        changed = added | modified
        conflicts = []
        for other, versioned in managed.fields.items():
            if other == manager:
                continue
            for path in versioned.fields & changed:
                conflicts.append((other, path))
        if conflicts and not force:
            raise ApplyConflicts(conflicts)
        for other, versioned in list(managed.fields.items()):
            if other == manager:
                continue
            versioned.fields = versioned.fields - changed - removed
            if not versioned.fields:
                del managed.fields[other]
        return added, modified, removed

    def update(self, live, new, managed, manager):
        managed = managed.copy()
        added, modified, removed = self._update_others(live, new, managed, manager, force=True)
        previous = managed.fields.get(manager)
        fields: FieldSet = (
            (previous.fields if previous else set()) - removed | modified | added
        )
        if fields:
            managed.fields[manager] = VersionedSet(fields, self.api_version, False)
        else:
            managed.fields.pop(manager, None)
        return new, managed

    def apply(self, live, config, managed, manager, force):
        managed = managed.copy()
        schema = self.schema
        merged = typed.merge(live, config, schema)
        last = managed.fields.get(manager)
        applied = self._filter(typed.field_set(config, schema))
        managed.fields[manager] = VersionedSet(applied, self.api_version, True)
        if last is not None and last.fields:
            merged = self._prune(merged, managed, manager, last.fields)
        self._update_others(live, merged, managed, manager, force)
        if merged == live:
            return None, managed
        return merged, managed

    def _prune(
        self, merged: Object, managed: Managed, manager: str, last: FieldSet
    ) -> Object:
        schema = self.schema
        members = typed.named_fields_as_members
        pruned = typed.remove(merged, members(last, schema), schema)
        # Add back what any manager (the applier's new set included) still owns.
        owned: FieldSet = set()
        for versioned in managed.fields.values():
            owned |= versioned.fields
        merged_set = members(typed.field_set(merged, schema), schema)
        pruned_set = members(typed.field_set(pruned, schema), schema)
        pruned = typed.remove(
            merged, merged_set - (pruned_set | members(owned, schema)), schema
        )
        # Keep what the applier never owned (items left dangling by the removal).
        pruned_set = members(typed.field_set(pruned, schema), schema)
        return typed.remove(
            merged, (merged_set - pruned_set) & members(last, schema), schema
        )
