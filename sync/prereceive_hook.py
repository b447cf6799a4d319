"""The hosted repositories' pre-receive hook: a thin client, standard library only.

Booting Django in the hook cost about a second per push. Instead, the hook
hands git's "old new ref" lines and the push's quarantine directory to the API
server that is serving the push (``KAPI_PRERECEIVE_URL``, authenticated with
the pusher's own token, both set by ``sync.http.git_http`` for the
``git http-backend`` it runs), which renders and dry-runs the revision in its
already warm process (``sync.http.pre_receive``). Its messages are printed on
stderr, which git shows the pusher as ``remote:`` lines; the exit status
accepts (0) or rejects (1) the push. If the server cannot be asked, the push
is rejected: validation never silently passes.

A push that did not come through the server (no ``KAPI_PRERECEIVE_URL``, e.g.
an administrator pushing to the directory) falls back to
``manage.py sync pre-receive``.

    python -I -S prereceive_hook.py NAMESPACE NAME < updates
"""

import json
import os
import re
import ssl
import sys
import urllib.error
import urllib.request
from pathlib import Path

TIMEOUT = 600


def main(namespace: str, name: str) -> int:
    url = os.environ.get("KAPI_PRERECEIVE_URL")
    if not url:
        manage = Path(__file__).resolve().parents[1] / "manage.py"
        os.execv(sys.executable, [sys.executable, str(manage), "sync", "pre-receive", namespace, name])
    if os.environ.get("KAPI_PUSH_NOTE"):  # e.g. -o wait with nothing to wait for (sync.http)
        sys.stderr.write(f"{os.environ['KAPI_PUSH_NOTE']}\n")
    quarantine = os.environ.get("GIT_QUARANTINE_PATH", "")
    body = json.dumps({
        "updates": sys.stdin.read().splitlines(),
        # git may give it relative to the repository, the hook's working directory
        "quarantine": os.path.abspath(quarantine) if quarantine else "",
    }).encode()
    request = urllib.request.Request(url, data=body, method="POST", headers={
        "Content-Type": "application/json",
        "Authorization": "Bearer " + os.environ.get("KAPI_PUSH_TOKEN", ""),
    })
    context = None
    if url.startswith("https:"):
        # The hook talks to the very socket the push arrived on, whose address
        # need not be one of the certificate's names: verify the chain only.
        context = ssl.create_default_context(cafile=os.environ.get("KAPI_CA_FILE") or None)
        context.check_hostname = False
    try:
        with urllib.request.urlopen(request, context=context, timeout=TIMEOUT) as response:
            status, raw = response.status, response.read()
    except urllib.error.HTTPError as exc:
        status, raw = exc.code, exc.read()
    except (urllib.error.URLError, OSError, ValueError) as exc:
        sys.stderr.write(f"kapi: push rejected: cannot validate it: {exc}\n")
        return 1
    messages, accepted = _answer(status, raw)
    for line in messages:
        sys.stderr.write(f"{line}\n")
    return 0 if accepted else 1


_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def _answer(status: int, raw: bytes) -> tuple[list[str], bool]:
    """The lines to show and the verdict, from any answer: only a 200 with
    ``accepted: true`` accepts; a body that is not the endpoint's JSON (a proxy's
    or framework's error page) is never shown, only its status."""
    try:
        answer = json.loads(raw)
    except ValueError:
        answer = None
    if not isinstance(answer, dict):
        return [f"kapi: push rejected: cannot validate it: the server answered HTTP {status}"], False
    lines = answer.get("messages")
    # One line each, control characters blanked; leading spaces stay (the plan indents).
    messages = ([_CONTROL.sub(" ", str(m)).rstrip() for m in lines if str(m).strip()]
                if isinstance(lines, list) else [])
    if status != 200 and not messages:
        detail = " ".join(str(answer.get("message") or f"HTTP {status}").split())
        messages = [f"kapi: push rejected: cannot validate it: {detail}"]
    return messages, status == 200 and answer.get("accepted") is True


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
