"""``git push -o wait[=DURATION]``: the option, its bounds, and the waits in progress.

A push with ``-o wait`` stays open until every Sync that uses the pushed
revision is Ready or has failed, or the duration passes (``sync.pushwait``).
``wait`` alone waits ``DEFAULT_WAIT``; ``wait=90s``, ``wait=2m``, ``wait=1m30s``
(Go durations, as the Syncs' own ``spec.timeout``) choose; more than
``KAPI_SYNC_PUSH_WAIT_MAX_SECONDS`` (default 10 minutes) waits that long and
says so. Anything else is refused before git receives the push. Other push
options are git's business and are left alone; the last ``wait`` wins.

A waiting push holds one of this API process's git slots
(``KAPI_GIT_HTTP_CONCURRENCY``) for as long as it waits, so at most
``KAPI_SYNC_PUSH_WAITS`` (default 2) wait at once per API process; a push
that finds none free is refused at once (nothing happened: push again, or
without ``-o wait``).

The option reaches git's hooks only when git is told to pass it: every push
advertises ``push-options`` (``receive.advertisePushOptions``), and a push
asking to wait has its tracked ref handed to the ``proc-receive`` hook
(``receive.procReceiveRefs``, ``sync.pushwait_hook``): both through git's
per-command configuration in the environment (``git_config``), so a
repository's own config never changes.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["DEFAULT_WAIT", "PushOptionError", "Wait", "git_config", "take_wait_slot", "tracked_ref", "wait_of"]

#: ``-o wait`` without a duration.
DEFAULT_WAIT = 120.0


class PushOptionError(ValueError):
    """A push option kapi reads has a value it cannot use; the message says
    what would be accepted."""


@dataclass(frozen=True)
class Wait:
    """How long the push waits (``seconds``) and, when the server's cap cut
    the asked duration, a line saying so (``note``)."""

    seconds: float
    note: str = ""


def _max_wait() -> float:
    from django.conf import settings

    return float(settings.SYNC_PUSH_WAIT_MAX_SECONDS)


def _text(seconds: float) -> str:
    minutes, rest = divmod(round(seconds), 60)
    if minutes and rest:
        return f"{minutes}m{rest}s"
    return f"{minutes}m" if minutes else f"{rest}s"


def wait_of(options: list[str]) -> Wait | None:
    """The ``wait`` push option among ``options`` (None when absent)."""
    values = [o.partition("=") for o in options if o == "wait" or o.startswith("wait=")]
    if not values:
        return None
    _, has_value, value = values[-1]
    if not has_value:
        return Wait(DEFAULT_WAIT)
    shown = value[:40]
    if value.isdigit():
        raise PushOptionError(f"-o wait={shown}: give a unit (e.g. -o wait={shown}s)")
    from sync.kinds import parse_duration

    seconds = parse_duration(value, -1.0)
    if seconds < 0:
        raise PushOptionError(f"-o wait={shown} is not a duration: use -o wait (2m), or e.g. "
                              "-o wait=30s, -o wait=5m, -o wait=1m30s")
    if seconds <= 0:
        raise PushOptionError(f"-o wait={shown}: the duration must be more than zero")
    cap = _max_wait()
    if seconds > cap:
        return Wait(cap, f"kapi: waiting at most {_text(cap)}, this server's limit "
                         f"(KAPI_SYNC_PUSH_WAIT_MAX_SECONDS), not {shown}")
    return Wait(seconds)


def tracked_ref(repo: dict) -> str | None:
    """The ref whose update the Syncs of GitRepository ``repo`` apply (None when
    it is pinned to a commit: no push moves it)."""
    ref = (repo.get("spec") or {}).get("ref") or {}
    if ref.get("commit"):
        return None
    if ref.get("tag"):
        return f"refs/tags/{ref['tag']}"
    return f"refs/heads/{ref.get('branch') or 'main'}"


_slots_lock = threading.Lock()
_slots: list[threading.BoundedSemaphore] = []


def take_wait_slot():
    """One of this process's ``KAPI_SYNC_PUSH_WAITS`` waits, taken without
    waiting: a function that gives it back (once), or None when all are taken."""
    from django.conf import settings

    with _slots_lock:
        if not _slots:
            _slots.append(threading.BoundedSemaphore(max(1, int(settings.SYNC_PUSH_WAITS))))
        semaphore = _slots[0]
    if not semaphore.acquire(blocking=False):
        return None
    given_back = threading.Event()

    def release() -> None:
        with _slots_lock:
            if given_back.is_set():
                return
            given_back.set()
        semaphore.release()

    return release


def git_config(env: Mapping[str, str], pairs: dict[str, str]) -> dict[str, str]:
    """``env`` with git configuration ``pairs`` added for the commands run in it
    (``GIT_CONFIG_COUNT``/``_KEY_n``/``_VALUE_n``, after any already there)."""
    out = dict(env)
    try:
        count = int(out.get("GIT_CONFIG_COUNT") or 0)
    except ValueError:
        count = 0
    for key, value in pairs.items():
        out[f"GIT_CONFIG_KEY_{count}"] = key
        out[f"GIT_CONFIG_VALUE_{count}"] = value
        count += 1
    out["GIT_CONFIG_COUNT"] = str(count)
    return out
