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
            answer = json.loads(response.read())
    except (urllib.error.URLError, OSError, ValueError) as exc:
        detail = exc.read().decode(errors="replace").strip() if isinstance(exc, urllib.error.HTTPError) else exc
        sys.stderr.write(f"kapi: push rejected: cannot validate it: {detail}\n")
        return 1
    for line in answer.get("messages") or []:
        sys.stderr.write(f"{line}\n")
    return 0 if answer.get("accepted") else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
