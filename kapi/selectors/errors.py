"""SelectorError: a label or field selector that does not parse or validate.

The message is kube's own (``unable to parse requirement: ...``,
``field label not supported: ...``) so the API layer can answer 400 BadRequest
with it verbatim.
"""

from __future__ import annotations

__all__ = ["SelectorError"]


class SelectorError(ValueError):
    """A malformed or invalid selector; ``str(err)`` is kube's message."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message
