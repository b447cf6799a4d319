"""Lets ``kubectl apply --server-side`` take over from client-side apply
(kube's ``lastAppliedManager``).

When kubectl (manager ``kubectl``) applies and the only conflicts are on fields
whose live values still match the client-side ``last-applied-configuration``
annotation, those fields were set by the earlier client-side applies: the
apply is forced instead of failing.
"""

from __future__ import annotations

import json

from kapi.fieldmanager import typed
from kapi.fieldmanager.conflicts import ApplyConflicts
from kapi.fieldmanager.interface import Wrapper
from kapi.fieldmanager.lastappliedupdater import LAST_APPLIED
from kapi.schema import TypeSchema

__all__ = ["LastAppliedManager"]


class LastAppliedManager(Wrapper):
    def __init__(self, inner, schema: TypeSchema | None) -> None:
        super().__init__(inner)
        self.schema = schema

    def apply(self, live, config, managed, manager, force):
        try:
            return self.inner.apply(live, config, managed, manager, force)
        except ApplyConflicts as exc:
            if manager != "kubectl":
                raise
            allowed = self._allowed(live)
            remaining = [(m, p) for m, p in exc.conflicts if p not in allowed]
            if remaining:
                raise ApplyConflicts(remaining) from None
            return self.inner.apply(live, config, managed, manager, True)

    def _allowed(self, live) -> set:
        text = ((live.get("metadata") or {}).get("annotations") or {}).get(LAST_APPLIED)
        if not text:
            return set()
        try:
            last = json.loads(text)
        except ValueError:
            return set()
        if not isinstance(last, dict) or last.get("apiVersion") != live.get(
            "apiVersion"
        ):
            return set()
        _, modified, _ = typed.compare(last, live, self.schema)
        return typed.field_set(last, self.schema) - modified
