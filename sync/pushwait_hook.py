"""The hosted repositories' ``proc-receive`` hook: ``git push -o wait``.

git runs it only for a push made with ``-o wait``, and only for the ref the
repository's Syncs follow (``receive.procReceiveRefs``, set per push by
``sync.http``; other refs "fall through" to git as usual). By then
pre-receive has validated the revision and git has moved the pushed objects
into the repository. This hook:

1. updates the ref itself (``git update-ref`` with the old value, as git
   would), so the revision is pushed whatever happens next;
2. asks the API server serving the push (``KAPI_PUSH_WAIT_URL``, the
   pusher's token) where the Syncs stand (``sync.pushwait``), every
   ``_INTERVALS`` seconds, printing each line that changed on stderr (the
   pusher's ``remote:`` lines);
3. reports the ref ``ok`` once every Sync is Ready, or ``ng`` with a reason
   that says the push happened ("pushed, but Sync ns/app failed: ...",
   "pushed, but timed out ...") so that git's exit status tells the pusher
   whether it worked.

Standard library only, like ``sync.prereceive_hook`` (no Django boot per push).
It speaks git's proc-receive protocol (githooks(5)) on stdin/stdout.

    python -I -S pushwait_hook.py NAMESPACE NAME
"""

import http.client
import json
import os
import re
import ssl
import subprocess
import sys
import time
import urllib.parse

#: Seconds between two questions: quick at first (a small change is applied
#: in about a second), then modest for long waits.
_INTERVALS = (0.1, 0.1, 0.2, 0.2, 0.3, 0.3, 0.5, 0.5, 0.5, 1.0)
#: A server that keeps failing to answer: give up after this many in a row.
_FAILURES = 5
_REQUEST_TIMEOUT = 30
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


# -- git's pkt-line protocol ---------------------------------------------------

def _read_pkt(stream) -> str | None:
    """One pkt-line's text, None at a flush (or the end of input)."""
    size = stream.read(4)
    if len(size) < 4 or size == b"0000":
        return None
    data = stream.read(int(size, 16) - 4)
    return data.decode(errors="replace").removesuffix("\n")


def _read_until_flush(stream) -> list[str]:
    lines = []
    while (line := _read_pkt(stream)) is not None:
        lines.append(line)
    return lines


def _write_pkt(out, text: str) -> None:
    data = text.encode() + b"\n"
    out.write(b"%04x" % (len(data) + 4) + data)


def _say(line: str) -> None:
    sys.stderr.write(_CONTROL.sub(" ", line).rstrip() + "\n")
    sys.stderr.flush()


# -- asking the server ---------------------------------------------------------

class _Server:
    """The API server, asked over one kept-alive connection."""

    def __init__(self, url: str, token: str) -> None:
        self.url = urllib.parse.urlsplit(url)
        self.token = token
        self.connection = None

    def _connect(self):
        if self.url.scheme == "https":
            # The socket the push arrived on, whose address need not be one of
            # the certificate's names: verify the chain only (as pre-receive).
            context = ssl.create_default_context(cafile=os.environ.get("KAPI_CA_FILE") or None)
            context.check_hostname = False
            return http.client.HTTPSConnection(self.url.hostname, self.url.port, timeout=_REQUEST_TIMEOUT,
                                               context=context)
        return http.client.HTTPConnection(self.url.hostname, self.url.port, timeout=_REQUEST_TIMEOUT)

    def ask(self, body: dict) -> dict:
        """The server's answer; raises OSError (or ValueError) when there is none."""
        data = json.dumps(body).encode()
        headers = {"Content-Type": "application/json", "Authorization": "Bearer " + self.token}
        for attempt in (1, 2):  # a kept-alive connection the server closed: once more, anew
            if self.connection is None:
                self.connection = self._connect()
            try:
                self.connection.request("POST", self.url.path, body=data, headers=headers)
                response = self.connection.getresponse()
                status, raw = response.status, response.read()
                break
            except (OSError, http.client.HTTPException) as exc:
                self.connection.close()
                self.connection = None
                if attempt == 2:
                    raise OSError(str(exc) or type(exc).__name__) from None
        answer = json.loads(raw) if raw.strip().startswith(b"{") else None
        if status != 200 or not isinstance(answer, dict):
            message = answer.get("message") if isinstance(answer, dict) else None
            raise ValueError(" ".join(str(message or f"the server answered HTTP {status}").split()))
        return answer


# -- the wait ------------------------------------------------------------------

def _text(seconds: float) -> str:
    minutes, rest = divmod(round(seconds), 60)
    if minutes and rest:
        return f"{minutes}m{rest}s"
    return f"{minutes}m" if minutes else f"{rest}s"


def _listing(items: list[str], limit: int = 5) -> str:
    more = f" and {len(items) - limit} more" if len(items) > limit else ""
    return "; ".join(items[:limit]) + more


def _wait(server: _Server, updates: list[str], seconds: float) -> str:
    """Print the Syncs' progress until all are done or ``seconds`` pass: ""
    when every one is Ready, else the reason for git's ``ng``."""
    started = time.monotonic()
    deadline = started + seconds
    shown: set[str] = set()
    answer: dict = {}
    failures, asked = 0, 0
    while True:
        try:
            answer = server.ask({"updates": updates, "start": asked == 0})
            failures = 0
        except (OSError, ValueError) as exc:
            failures += 1
            if asked == 0 or failures >= _FAILURES:
                _say(f"kapi: cannot follow the Syncs: {exc}")
                return "pushed, but its outcome is unknown: kapi could not follow the Syncs"
        asked += 1
        for line in answer.get("lines") or []:
            if line not in shown:
                shown.add(line)
                _say(str(line))
        if answer.get("done"):
            break
        left = deadline - time.monotonic()
        if left <= 0:
            pending = [str(p) for p in answer.get("pending") or []]
            _say(f"kapi: -o wait: timed out after {_text(seconds)}; still waiting for: " + _listing(pending))
            names = _listing([p.split(":", 1)[0].removeprefix("Sync ") for p in pending])
            return f"pushed, but timed out after {_text(seconds)} waiting for Sync {names}"[:300]
        time.sleep(min(left, _INTERVALS[min(asked, len(_INTERVALS)) - 1]))
    failed = [str(f) for f in answer.get("failed") or []]
    took = f"{time.monotonic() - started:.1f}s"
    if failed:
        _say(f"kapi: -o wait: {len(failed)} Sync(s) failed ({took})")
        if len(failed) == 1:
            return "pushed, but " + failed[0][:200]
        return f"pushed, but {len(failed)} Syncs failed: " + _listing(
            [f.split(" failed:", 1)[0].removeprefix("Sync ") for f in failed])
    _say(f"kapi: -o wait: done ({took})")
    return ""


def _update_ref(old: str, new: str, ref: str) -> str:
    """Move ``ref`` from ``old`` to ``new`` as git would ("" when done, else why not)."""
    done = subprocess.run(["git", "update-ref", "-m", "push", ref, new, old],
                          capture_output=True, text=True, check=False)
    if done.returncode == 0:
        return ""
    return " ".join((done.stderr.strip().splitlines() or ["failed to update ref"])[-1].split())[:200]


def main() -> int:
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    _read_until_flush(stdin)  # version=1 and git's features
    _write_pkt(stdout, "version=1\0push-options")
    stdout.write(b"0000")
    stdout.flush()
    commands = [line.split(" ", 2) for line in _read_until_flush(stdin)]
    _read_until_flush(stdin)  # the push options: sync.http read them already
    tracked = os.environ.get("KAPI_PUSH_WAIT_REF", "")
    reports: dict[str, str] = {}
    updated: list[str] = []
    for old, new, ref in commands:
        if ref != tracked:
            continue  # matched only as a prefix: git updates it itself
        why = _update_ref(old, new, ref)
        reports[ref] = f"ng {ref} {why}" if why else f"ok {ref}"
        if not why:
            updated.append(f"{old} {new} {ref}")
    if updated:
        note = os.environ.get("KAPI_PUSH_WAIT_NOTE", "")
        if note:
            _say(note)
        seconds = float(os.environ.get("KAPI_PUSH_WAIT_SECONDS") or 120)
        _say(f"kapi: -o wait: pushed; waiting up to {_text(seconds)} for the Syncs")
        server = _Server(os.environ.get("KAPI_PUSH_WAIT_URL", ""), os.environ.get("KAPI_PUSH_TOKEN", ""))
        try:
            reason = _wait(server, updated, seconds)
        except Exception as exc:  # noqa: BLE001 - the ref moved: say so, whatever broke
            _say(f"kapi: cannot follow the Syncs: {type(exc).__name__}: {exc}")
            reason = "pushed, but its outcome is unknown: kapi could not follow the Syncs"
        if reason:
            for line in updated:
                ref = line.split(" ", 2)[2]
                reports[ref] = f"ng {ref} {_CONTROL.sub(' ', reason)}"
    for _, _, ref in commands:
        if ref in reports:
            _write_pkt(stdout, reports[ref])
        else:
            _write_pkt(stdout, f"ok {ref}")
            _write_pkt(stdout, "option fall-through")
    stdout.write(b"0000")
    stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
