"""Keeps kubectl's client-side ``last-applied-configuration`` annotation in step
when kubectl applies server-side (kube's ``lastAppliedUpdater``), so a later
client-side apply does not undo it."""

from __future__ import annotations

import json

from kapi.fieldmanager.interface import Wrapper

__all__ = ["LAST_APPLIED", "LastAppliedUpdater"]

LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


class LastAppliedUpdater(Wrapper):
    def apply(self, live, config, managed, manager, force):
        obj, managed = self.inner.apply(live, config, managed, manager, force)
        result = obj if obj is not None else live
        annotations = (result.get("metadata") or {}).get("annotations") or {}
        if manager == "kubectl" and LAST_APPLIED in annotations:
            value = json.loads(json.dumps(config))
            (value.get("metadata") or {}).get("annotations", {}).pop(LAST_APPLIED, None)
            text = json.dumps(value, separators=(",", ":"), sort_keys=True) + "\n"
            if annotations[LAST_APPLIED] != text:
                result = json.loads(json.dumps(result))
                result["metadata"]["annotations"][LAST_APPLIED] = text
                obj = result
        return obj, managed
