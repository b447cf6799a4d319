"""coordination.k8s.io Lease."""

from __future__ import annotations

from kapi.registry.strategy import Column, Object, Strategy

__all__ = ["LeaseStrategy"]


class LeaseStrategy(Strategy):
    def table_columns(self) -> list[Column]:
        return [Column("Holder", description="The holder of the lease")]

    def table_cells(self, obj: Object) -> list:
        return [(obj.get("spec") or {}).get("holderIdentity", "")]
