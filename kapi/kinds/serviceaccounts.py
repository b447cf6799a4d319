"""ServiceAccount."""

from __future__ import annotations

from kapi.registry.strategy import Column, Object, Strategy

__all__ = ["ServiceAccountStrategy"]


class ServiceAccountStrategy(Strategy):
    def table_columns(self) -> list[Column]:
        return [Column("Secrets", type="integer", description="The number of secrets")]

    def table_cells(self, obj: Object) -> list:
        return [len(obj.get("secrets") or [])]
