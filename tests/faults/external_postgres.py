"""An "external" PostgreSQL 15 server for fault tests: the distribution's
binaries (``/usr/lib/postgresql/15/bin``), a cluster made with ``initdb`` in a
temporary directory, listening on 127.0.0.1 on a free port, and started,
stopped and restarted with ``pg_ctl``. Run as the ``postgres`` system user when
the tests run as root (PostgreSQL refuses to run as root)."""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path

from kapi_testserver import free_port

__all__ = ["BIN", "ExternalPostgres"]

BIN = Path(os.environ.get("KAPI_TEST_PG_BIN", "/usr/lib/postgresql/15/bin"))


class ExternalPostgres:
    def __init__(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="kapi-extpg-"))
        self.pgdata = self.root / "data"
        self.port = free_port()
        self.url = f"postgresql://postgres@127.0.0.1:{self.port}/postgres"
        self._user = None
        if os.geteuid() == 0:
            self._user = pwd.getpwnam("postgres")
            os.chown(self.root, self._user.pw_uid, self._user.pw_gid)
        self._run(BIN / "initdb", "-D", self.pgdata, "-U", "postgres", "--auth=trust",
                  "-E", "UTF8", "--locale=C.UTF-8", "--no-sync")

    def _run(self, *argv, timeout: float = 120) -> None:
        user = self._user

        def demote() -> None:
            if user is not None:
                os.setgid(user.pw_gid)
                os.setuid(user.pw_uid)

        result = subprocess.run(
            [str(a) for a in argv], capture_output=True, text=True, timeout=timeout,
            preexec_fn=demote, cwd=self.root,
        )
        if result.returncode:
            raise AssertionError(f"{argv[0]} failed:\n{result.stdout}\n{result.stderr}")

    def _options(self) -> str:
        return (f"-c listen_addresses=127.0.0.1 -p {self.port} -c unix_socket_directories={self.root}"
                " -c fsync=off -c max_connections=200")

    def start(self) -> None:
        self._run(BIN / "pg_ctl", "-D", self.pgdata, "-l", self.root / "postgres.log",
                  "-o", self._options(), "-w", "-t", "60", "start")

    def stop(self) -> None:
        self._run(BIN / "pg_ctl", "-D", self.pgdata, "-m", "fast", "-w", "-t", "60", "stop")

    def restart(self) -> None:
        self._run(BIN / "pg_ctl", "-D", self.pgdata, "-l", self.root / "postgres.log",
                  "-m", "fast", "-o", self._options(), "-w", "-t", "60", "restart")

    def version(self) -> str:
        return (self.pgdata / "PG_VERSION").read_text().strip()

    def destroy(self) -> None:
        try:
            if (self.pgdata / "postmaster.pid").exists():
                self._run(BIN / "pg_ctl", "-D", self.pgdata, "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)
