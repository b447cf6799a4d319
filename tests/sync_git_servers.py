"""Real git servers with authentication for the sync's source tests, bound to
127.0.0.1 in the test process:

* ``BasicAuthGitServer``: git's own ``git http-backend`` (smart HTTP) behind
  ``http.server``, answering 401 + ``WWW-Authenticate: Basic`` unless the
  request carries one of the accepted user/password pairs (``None`` as the
  user accepts any user name, as forges do for tokens).
* ``SshGitServer``: an SSH server (asyncssh) with a generated host key that
  accepts one client public key and runs ``git-upload-pack`` for the path the
  client asks for, as GitHub or Gitea do over ssh.
"""

from __future__ import annotations

import asyncio
import base64
import os
import shlex
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

__all__ = ["BasicAuthGitServer", "SshGitServer"]


class BasicAuthGitServer:
    def __init__(self, root: Path, accepted: list[tuple[str | None, str]]) -> None:
        self.root = root
        self.accepted = accepted
        #: (user, password-was-accepted) of every request that sent credentials
        self.attempts: list[tuple[str, bool]] = []
        #: response sizes of the upload-pack POSTs (the packs sent to fetches)
        self.pack_bytes: list[int] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def _authorized(self) -> bool:
                scheme, _, value = self.headers.get("Authorization", "").partition(" ")
                if scheme.lower() != "basic":
                    return False
                user, _, password = base64.b64decode(value).decode().partition(":")
                ok = any(password == p and (u is None or u == user) for u, p in server.accepted)
                server.attempts.append((user, ok))
                return ok

            def _serve(self) -> None:
                if not self._authorized():
                    self.send_response(401)
                    self.send_header("WWW-Authenticate", 'Basic realm="test"')
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                path, _, query = self.path.partition("?")
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                env = {**os.environ, "GIT_PROJECT_ROOT": str(server.root), "GIT_HTTP_EXPORT_ALL": "1",
                       "PATH_INFO": path, "QUERY_STRING": query, "REQUEST_METHOD": self.command,
                       "CONTENT_TYPE": self.headers.get("Content-Type", ""), "CONTENT_LENGTH": str(len(body)),
                       "REMOTE_USER": "test", "REMOTE_ADDR": "127.0.0.1"}
                if self.headers.get("Git-Protocol"):
                    env["HTTP_GIT_PROTOCOL"] = self.headers["Git-Protocol"]
                done = subprocess.run(["git", "http-backend"], input=body, env=env, capture_output=True)
                head, _, payload = done.stdout.partition(b"\r\n\r\n")
                status, headers = 200, []
                for line in head.decode("latin-1").splitlines():
                    key, _, value = line.partition(":")
                    if key.lower() == "status":
                        status = int(value.split()[0])
                    elif key:
                        headers.append((key.strip(), value.strip()))
                if self.command == "POST" and path.endswith("/git-upload-pack"):
                    server.pack_bytes.append(len(payload))
                self.send_response(status)
                for key, value in headers:
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            do_GET = do_POST = _serve

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


class SshGitServer:
    """``ssh://git@127.0.0.1:PORT/<absolute path>``; ``host_key_line`` is the
    known_hosts line of its host key, ``client_key`` the accepted private key
    (OpenSSH format)."""

    def __init__(self) -> None:
        import asyncssh

        self.host_key = asyncssh.generate_private_key("ssh-ed25519")
        self.client_key = asyncssh.generate_private_key("ssh-ed25519")
        self.other_key = asyncssh.generate_private_key("ssh-ed25519")
        self.commands: list[str] = []
        self.loop = asyncio.new_event_loop()
        started = threading.Event()
        self.thread = threading.Thread(target=self._run, args=(started,), daemon=True)
        self.thread.start()
        started.wait(10)
        self.port = self.acceptor.sockets[0].getsockname()[1]

    def known_hosts_line(self, key=None) -> str:
        key = key or self.host_key
        return f"[127.0.0.1]:{self.port} {key.export_public_key().decode().strip()}\n"

    def private_key(self, key=None) -> str:
        return (key or self.client_key).export_private_key().decode()

    def url(self, path: Path) -> str:
        return f"ssh://git@127.0.0.1:{self.port}{path}"

    def _run(self, started: threading.Event) -> None:
        import asyncssh

        asyncio.set_event_loop(self.loop)
        authorized = asyncssh.import_authorized_keys(
            self.client_key.export_public_key().decode())

        async def handle(process) -> None:
            command = process.command or ""
            self.commands.append(command)
            argv = shlex.split(command)
            if not argv or argv[0] not in ("git-upload-pack", "git upload-pack"):
                process.stderr.write(f"only git-upload-pack is served, not {command!r}\n".encode())
                process.exit(1)
                return
            local = await asyncio.create_subprocess_exec(
                "git-upload-pack", argv[-1], stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
            await process.redirect(stdin=local.stdin, stdout=local.stdout, stderr=local.stderr)
            process.exit(await local.wait())
            await process.wait_closed()

        async def start() -> None:
            self.acceptor = await asyncssh.listen(
                "127.0.0.1", 0, server_host_keys=[self.host_key], authorized_client_keys=authorized,
                process_factory=handle, encoding=None, allow_scp=False)
            started.set()

        self.loop.run_until_complete(start())
        self.loop.run_forever()

    def close(self) -> None:
        async def stop() -> None:
            self.acceptor.close()
            await self.acceptor.wait_closed()

        asyncio.run_coroutine_threadsafe(stop(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
