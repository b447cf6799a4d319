"""Process start-up without the cyclic garbage collector walking the imports.

Importing Django and kapi creates some 200,000 objects that live as long as
the process. While they are being created the collector walks the growing
heap again and again: a fifth of a process's start-up CPU (``django.setup()``
and ``kapi.asgi``: 0.67 s with it, 0.53 s without, measured). The entry points
(``manage.py``, ``kapi.asgi``) call :func:`pause` before they import Django and
:func:`resume` once it is set up, which moves what start-up created to the
permanent generation (``gc.freeze``: later collections skip it too) and turns
the collector back on.
"""

from __future__ import annotations

import gc

__all__ = ["pause", "resume"]


def pause() -> None:
    gc.disable()


def resume() -> None:
    gc.freeze()
    gc.enable()
