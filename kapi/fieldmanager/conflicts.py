"""Apply conflicts and the 409 kube answers with (``internal/conflict.go``)."""

from __future__ import annotations

from kapi.errors import StatusError, status_failure
from kapi.fieldmanager.fieldpath import Path, path_string
from kapi.fieldmanager.managed import parse_identifier

__all__ = ["ApplyConflicts", "conflict_error", "print_manager"]


class ApplyConflicts(Exception):
    """(manager identifier, path) pairs another manager owns with other values."""

    def __init__(self, conflicts: list[tuple[str, Path]]) -> None:
        super().__init__(f"{len(conflicts)} conflict(s)")
        self.conflicts = conflicts


def print_manager(identifier: str) -> str:
    info = parse_identifier(identifier)
    out = f'"{info.get("manager", "")}"'
    if info.get("subresource"):
        out += f' with subresource "{info["subresource"]}"'
    if info.get("operation") == "Update":
        out += f" using {info.get('apiVersion', '')}"
    return out


def conflict_error(error: ApplyConflicts) -> StatusError:
    conflicts = sorted(error.conflicts, key=lambda c: (c[0], c[1]))
    causes = [
        {
            "reason": "FieldManagerConflict",
            "message": f"conflict with {print_manager(manager)}",
            "field": path_string(path),
        }
        for manager, path in conflicts
    ]
    if len(conflicts) == 1:
        manager, path = conflicts[0]
        message = f"Apply failed with 1 conflict: conflict with {print_manager(manager)}: {path_string(path)}"
    else:
        lines = []
        for manager in sorted({m for m, _ in conflicts}):
            lines.append(f"conflicts with {print_manager(manager)}:")
            lines += [f"- {path_string(p)}" for m, p in conflicts if m == manager]
        message = f"Apply failed with {len(conflicts)} conflicts: " + "\n".join(lines)
    return StatusError(status_failure(409, "Conflict", message, {"causes": causes}))
