"""Giving freed memory back to the operating system after a big answer.

A list of every ConfigMap of a big store is hundreds of thousands of small
encodings (one per object) before it is one body. Freed, those small blocks
stay in the C allocator's heap: glibc returns memory only from the top of
the heap, so one block still in use above them keeps the rest resident. An
API process that had answered a 720 MB list of 500,000 ConfigMaps stayed at
1.3-1.8 GB resident, for as long as it lived. ``malloc_trim(0)`` hands every
wholly free page back (``MADV_DONTNEED``); it walks the heap, so it is asked
only after an answer that big, never per request.

Where the C library has no ``malloc_trim`` (musl), nothing is done.
"""

from __future__ import annotations

import ctypes
from functools import cache

__all__ = ["TRIM_AFTER_BYTES", "after_big_answer"]

#: An answer at least this big is followed by a trim.
TRIM_AFTER_BYTES = 64 << 20


@cache
def _malloc_trim():
    try:
        # The C library the process runs on, as kapi.runtime.parent finds prctl.
        return ctypes.CDLL(None).malloc_trim
    except (AttributeError, OSError):
        return None


def after_big_answer(size: int) -> bool:
    """Called once an answer of ``size`` bytes was made and what it was made
    of freed; trims the heap if it was big. Returns whether it did."""
    if size < TRIM_AFTER_BYTES:
        return False
    trim = _malloc_trim()
    if trim is None:
        return False
    trim(0)
    return True
