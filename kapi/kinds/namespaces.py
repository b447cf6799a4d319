"""Namespace: cluster-scoped, named by DNS-1123 label, born ``Active``."""

from __future__ import annotations

from kapi import errors
from kapi.errors import Cause
from kapi.registry.strategy import Column, Object, Strategy

__all__ = ["PROTECTED_NAMESPACES", "NamespaceStrategy"]

#: Namespaces that exist from the start and cannot be deleted.
PROTECTED_NAMESPACES = ("default", "kube-system", "kube-public")

#: kube labels every namespace with its own name (NamespaceDefaultLabelName).
NAME_LABEL = "kubernetes.io/metadata.name"


class NamespaceStrategy(Strategy):
    status_subresource = True

    def prepare_for_create(self, obj: Object) -> None:
        obj["status"] = {"phase": "Active"}
        spec = obj.setdefault("spec", {})
        finalizers = spec.get("finalizers") or []
        if "kubernetes" not in finalizers:
            finalizers = [*finalizers, "kubernetes"]
        spec["finalizers"] = finalizers
        self._label(obj)

    def prepare_for_update(self, obj: Object, old: Object) -> None:
        super().prepare_for_update(obj, old)
        # spec.finalizers change only through /finalize.
        obj["spec"] = {**(obj.get("spec") or {}), "finalizers": (old.get("spec") or {}).get("finalizers", [])}
        self._label(obj)

    def prepare_for_subresource_update(self, subresource: str, obj: Object, old: Object) -> None:
        """``/finalize`` changes ``spec.finalizers`` (and metadata), never status."""
        if subresource != "finalize":
            return self.prepare_for_update(obj, old)
        obj["spec"] = {"finalizers": list((obj.get("spec") or {}).get("finalizers") or [])}
        if "status" in old:
            obj["status"] = old["status"]
        self._label(obj)

    def pending_finalizers(self, obj: Object) -> bool:
        """A namespace goes once both ``metadata.finalizers`` and ``spec.finalizers``
        are empty (the namespace controller's ``kubernetes`` finalizer lives in spec)."""
        return super().pending_finalizers(obj) or bool((obj.get("spec") or {}).get("finalizers"))

    def prepare_for_graceful_delete(self, obj: Object) -> None:
        obj["status"] = {**(obj.get("status") or {}), "phase": "Terminating"}

    def _label(self, obj: Object) -> None:
        meta = obj.setdefault("metadata", {})
        labels = meta.get("labels") or {}
        labels[NAME_LABEL] = meta.get("name", "")
        meta["labels"] = labels

    def check_delete(self, obj: Object) -> None:
        name = (obj.get("metadata") or {}).get("name", "")
        if name in PROTECTED_NAMESPACES:
            raise errors.forbidden("", "namespaces", name, "this namespace may not be deleted")

    def validate(self, obj: Object) -> list[Cause]:
        causes = []
        for i, f in enumerate((obj.get("spec") or {}).get("finalizers") or []):
            if not isinstance(f, str) or not f:
                causes.append(Cause("FieldValueInvalid", f"Invalid value: {f!r}", f"spec.finalizers[{i}]"))
        return causes

    def table_columns(self) -> list[Column]:
        return [Column("Status", description="The status of the namespace")]

    def table_cells(self, obj: Object) -> list:
        return [(obj.get("status") or {}).get("phase", "")]
