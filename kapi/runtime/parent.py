"""A child of ``serve`` stops when ``serve`` dies, even by SIGKILL.

``serve`` runs its children in sessions of their own (a terminal's Ctrl-C
reaches only ``serve``, which stops them in order), so nothing stopped them
when ``serve`` itself was killed outright (``kill -9``, the OOM killer): the
API server went on answering on the port and Celery went on working, with no
supervisor, until someone found them. Each child's main process asks Linux
for SIGTERM when its parent dies (``PR_SET_PDEATHSIG``) and then runs its own
graceful shutdown; ``serve`` names itself in ``KAPI_SERVE_PID`` so that only
its direct children ask. An API worker is a grandchild: it asks the same of
the API server's supervisor (:func:`follow_parent`), which uvicorn's own
supervision does not give it (a supervisor killed outright left its workers
answering on the port). A Celery pool process stops with its own parent.
The embedded PostgreSQL and Redis daemons are not children of ``serve`` by
then and are left running: the next ``serve`` on the same data directory
reuses the PostgreSQL server and stops the stale Redis before it starts its
own (``embedded.start_redis``).
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys

__all__ = ["SERVE_PID", "follow_parent", "follow_serve"]

#: The environment variable naming the ``serve`` process to follow.
SERVE_PID = "KAPI_SERVE_PID"

_PR_SET_PDEATHSIG = 1


def _term_when_parent_dies() -> bool:
    """Ask Linux for SIGTERM when this process's parent dies; False if it
    refused."""
    libc = ctypes.CDLL(None, use_errno=True)
    return libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0) == 0


def follow_parent(parent: int) -> None:
    """Get SIGTERM when ``parent``, the process that started this one, dies;
    SIGTERM at once if it already has (this one was handed to another)."""
    if not sys.platform.startswith("linux") or not _term_when_parent_dies():
        return
    if os.getppid() != parent:
        os.kill(os.getpid(), signal.SIGTERM)


def follow_serve() -> None:
    """In a direct child of ``serve``: get SIGTERM when ``serve`` dies."""
    expected = os.environ.get(SERVE_PID, "")
    if not expected.isdigit() or not sys.platform.startswith("linux"):
        return
    serve = int(expected)
    if os.getppid() == serve:
        if not _term_when_parent_dies() or os.getppid() == serve:
            return
    # serve is not (or no longer) our parent: a grandchild, or serve died
    # before we asked. Only in the second case is it gone.
    try:
        os.kill(serve, 0)
    except ProcessLookupError:
        os.kill(os.getpid(), signal.SIGTERM)
    except PermissionError:
        pass
