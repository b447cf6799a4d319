"""Why a patch could not be applied.

::

    PatchError
    ├── BadPatch       the patch document itself is malformed (kube: 400 BadRequest)
    └── PatchFailed    a well-formed patch does not apply to the object (kube: 422)
"""

from __future__ import annotations

__all__ = ["BadPatch", "PatchError", "PatchFailed"]


class PatchError(Exception):
    """Base of every patch failure; ``str()`` is the message kube would send."""


class BadPatch(PatchError):
    pass


class PatchFailed(PatchError):
    pass
