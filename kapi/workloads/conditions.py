"""Status conditions as kube's controllers set them (``SetCondition``: a
condition of the same type, status and reason is left as it is; one of the
same status keeps its ``lastTransitionTime``)."""

from __future__ import annotations

__all__ = ["get", "remove", "set_condition"]


def get(conditions: list | None, type_: str) -> dict | None:
    for cond in conditions or ():
        if isinstance(cond, dict) and cond.get("type") == type_:
            return cond
    return None


def set_condition(conditions: list | None, cond: dict) -> list:
    """``conditions`` with ``cond`` set; a new list."""
    current = get(conditions, cond["type"])
    if current is not None and current.get("status") == cond["status"] and current.get(
        "reason"
    ) == cond.get("reason"):
        return list(conditions or ())
    if current is not None and current.get("status") == cond["status"] and "lastTransitionTime" in current:
        cond = {**cond, "lastTransitionTime": current["lastTransitionTime"]}
    return [*remove(conditions, cond["type"]), cond]


def remove(conditions: list | None, type_: str) -> list:
    return [c for c in conditions or () if not (isinstance(c, dict) and c.get("type") == type_)]
