"""``spec.timeout`` inside a reconcile: one deadline checked between units of
work (files rendered, objects validated, applied or pruned)."""

from __future__ import annotations

import time

__all__ = ["TimeoutExceeded", "check"]


class TimeoutExceeded(Exception):
    """``spec.timeout`` ran out while ``stage``: ``done`` of ``total`` ``unit`` handled."""

    def __init__(self, stage: str, done: int, total: int, unit: str = "objects") -> None:
        super().__init__(f"{stage}: {done} of {total} {unit} done")
        self.stage, self.done, self.total, self.unit = stage, done, total, unit


def check(deadline: float | None, stage: str, done: int, total: int, unit: str = "objects") -> None:
    """Raise ``TimeoutExceeded`` once ``time.time()`` has passed ``deadline``."""
    if deadline is not None and time.time() >= deadline:
        raise TimeoutExceeded(stage, done, total, unit)
