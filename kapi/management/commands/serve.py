"""``manage.py serve``: run the whole of kapi in the foreground.

Start-up, in order: the data directory (locked, one ``serve`` per directory);
the embedded PostgreSQL unless ``DATABASE_URL`` is set; the embedded Redis unless
``CELERY_BROKER_URL`` is set; migrations, in this process, and with them the
bootstrap objects (system namespaces, RBAC policy, the admin user); TLS material
and the token file; then the children: uvicorn (the API), a Celery worker and
Celery beat. A line ``kapi is ready at URL`` is printed once ``/readyz`` answers.

Ctrl-C or SIGTERM stops everything in reverse order: children, Redis,
PostgreSQL. If a child exits on its own, the rest is stopped and ``serve``
exits 1.

Metrics: every child (each uvicorn worker, each Celery pool process) writes
its samples to ``DATA_DIR/metrics`` (``PROMETHEUS_MULTIPROC_DIR``, emptied at
start), and ``GET /metrics`` on the API port, answered by any API process, adds
them all up. Scrape it like kube-apiserver's, with a bearer token of a user in
the ``system:monitoring`` group (or any user RBAC allows ``get`` on the
non-resource URL ``/metrics``)::

    scrape_configs:
      - job_name: kapi
        scheme: https
        tls_config: {ca_file: DATA_DIR/tls/ca.crt}
        authorization: {credentials_file: /path/to/token}
        static_configs: [{targets: ["HOST:PORT"]}]

Logs: one JSON line per request (``kapi.request``), per task (``kapi.task``)
and per reconcile (``kapi.reconcile``) on stderr; ``X-Request-Id`` in every
response names the request, and the tasks it enqueued log the same id. When
stdout or stderr is a regular file it is kept under ``KAPI_LOG_MAXSIZE`` MiB
(default 100) plus one ``.1`` copy (:mod:`kapi.runtime.logfile`).

``--data-dir`` is applied by ``manage.py`` before Django reads its settings
(they read ``KAPI_DATA_DIR`` at import); here it is only checked.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
import sys
import time
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from kapi.observability.exposition import reset_directory
from kapi.runtime import (
    certs,
    config,
    embedded,
    endpoint,
    logfile,
    processes,
    programs,
    scheduling,
    tokens,
)
from kapi.runtime.readiness import probe_ready
from kapi.runtime.supervisor import Supervisor

__all__ = ["Command"]


class _StopRequested(BaseException):
    """Raised by the signal handler while start-up is still in progress."""


class _StopFlag:
    """Whether serve was asked to stop, set from a signal handler: a plain
    attribute, where ``threading.Event.set()`` can wait forever for the lock
    the interrupted main thread holds. ``wait`` sleeps instead of waiting on
    a condition; a signal ends the sleep's wait for the flag within its
    timeout."""

    def __init__(self) -> None:
        self._set = False
        self._signal: int | None = None

    def set(self, signum: int | None = None) -> None:
        if signum is not None and not self._set:
            self._signal = signum
        self._set = True

    def is_set(self) -> bool:
        return self._set

    def wait(self, timeout: float) -> bool:
        if not self._set:
            time.sleep(timeout)
        return self._set

    def take_signal(self) -> int | None:
        """The signal that set the flag, once."""
        signum, self._signal = self._signal, None
        return signum


class Command(BaseCommand):
    help = "Run kapi (API server, Celery worker and beat, embedded databases)."
    requires_system_checks: list = []
    requires_migrations_checks = False

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--bind",
            default=endpoint.DEFAULT_BIND,
            help="HOST:PORT to listen on (default %(default)s).",
        )
        parser.add_argument(
            "--data-dir", help="Data directory (default: $KAPI_DATA_DIR or ./.kapi)."
        )
        parser.add_argument(
            "--insecure-http", action="store_true", help="Serve plain HTTP, not HTTPS."
        )
        parser.add_argument(
            "--workers", type=int, default=2, help="API server processes (default 2)."
        )
        parser.add_argument(
            "--celery-concurrency",
            type=int,
            default=2,
            help="Celery worker pool processes (default 2).",
        )
        parser.add_argument(
            "--no-worker",
            action="store_true",
            help="Start no Celery worker (run `celery -A kapi worker` yourself; beat still runs).",
        )
        parser.add_argument(
            "--tls-san",
            action="append",
            default=[],
            help="Extra host name or IP for the serving certificate (repeatable).",
        )
        parser.add_argument(
            "--access-log", action="store_true", help="Log every API request."
        )
        parser.add_argument(
            "--log-level",
            default=os.environ.get("KAPI_LOG_LEVEL", "warning").lower(),
            choices=["debug", "info", "warning", "error", "critical"],
            help="Log level of the child processes.",
        )

    def handle(self, *args: object, **options: object) -> None:
        data_dir = config.data_dir()
        wanted = options.get("data_dir")
        if wanted and Path(str(wanted)).resolve() != data_dir:
            # Settings were computed for another directory; run through manage.py.
            raise CommandError(
                f"--data-dir {wanted} does not match KAPI_DATA_DIR ({data_dir});"
                " run serve through manage.py, which applies --data-dir first"
            )
        if int(options["workers"]) < 1:  # type: ignore[call-overload]
            raise CommandError("--workers must be at least 1")
        try:
            bind = endpoint.parse_bind(
                str(options["bind"]),
                scheme="http" if options["insecure_http"] else "https",
            )
        except ValueError as error:
            raise CommandError(str(error)) from error

        # Before anything starts, so that every child inherits it.
        problem = scheduling.use_batch_policy()
        if problem:
            self._say(problem, error=True)

        # Before anything starts: a missing git would otherwise show only at the
        # first push or sync.
        problem = programs.missing()
        if problem:
            raise CommandError(f"cannot start: {problem}")
        for line in programs.warnings():
            self._say(line, error=True)

        # serve > FILE: bounded like copytruncate (kapi.runtime.logfile).
        self._logs = logfile.LogFiles.from_env()
        self._logs.start()

        data_dir.mkdir(parents=True, exist_ok=True)
        lock_fd = _lock_data_dir(data_dir)
        # Another server on the port: the API workers' SO_REUSEPORT would
        # join it and share its connections (kapi.runtime.endpoint).
        problem = endpoint.address_in_use(bind.host, bind.port)
        if problem:
            os.close(lock_fd)
            raise CommandError(f"{problem} (is another kapi serve running?)")
        self._stopping = _StopFlag()
        self._starting = True
        previous = {
            sig: signal.signal(sig, self._on_signal)
            for sig in (signal.SIGINT, signal.SIGTERM)
        }
        try:
            code = self._run(data_dir, bind, options)
        except _StopRequested:
            code = 0
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
            os.close(lock_fd)
        if code:
            sys.exit(code)

    def _on_signal(self, signum: int, frame: object) -> None:
        # Only the flag: the handler runs between two bytecodes of the main
        # thread, which may hold the lock of a threading.Event (set() here
        # waited for it forever: serve hung on SIGTERM) or be inside a write
        # to stdout (a second write here raises). The main thread says it.
        if self._stopping.is_set():
            return
        self._stopping.set(signum)
        if self._starting:
            # Interrupt whatever start-up step is running; the ExitStack in
            # _run stops what was already started.
            raise _StopRequested

    def _say_stopping(self) -> None:
        """Once, from the main thread: the signal that asked serve to stop."""
        signum = self._stopping.take_signal()
        if signum is not None:
            self._say(f"received {signal.Signals(signum).name}, stopping")

    def _run(self, data_dir: Path, bind: endpoint.Endpoint, options: dict) -> int:
        log_level = str(options["log_level"])
        with contextlib.ExitStack() as stack:
            try:
                database_url = os.environ.get("DATABASE_URL")
                if not database_url:
                    pgdata = config.embedded_postgres_dir()
                    # Registered before starting: an interrupted start may leave a
                    # running postmaster behind.
                    stack.callback(embedded.stop_postgres, pgdata)
                    self._say(f"starting embedded PostgreSQL in {pgdata}")
                    database_url = embedded.start_postgres(pgdata).url
                broker_url = os.environ.get("CELERY_BROKER_URL")
                if not broker_url:
                    self._say(
                        f"starting embedded Redis on {config.embedded_redis_socket()}"
                    )
                    redis = embedded.start_redis()
                    stack.callback(redis.stop)
                    broker_url = redis.url

                def env(celery: bool = False) -> dict[str, str]:
                    return processes.child_env(
                        os.environ,
                        data_dir=data_dir,
                        database_url=database_url,
                        broker_url=broker_url,
                        celery=celery,
                    )

                self._migrate(database_url)
                if self._stopping.is_set():
                    # The signal came while migrate ran Python code, where the
                    # raise can land in a finalizer, which swallows it.
                    raise _StopRequested
                tls = certs.ensure_tls(data_dir, bind.host, options["tls_san"])
                tokens.ensure_token_file()
                endpoint.write_endpoint(data_dir, bind)

                reset_directory(data_dir / "metrics")
                supervisor = Supervisor()
                stack.callback(self._stop_children, supervisor)
                supervisor.start(
                    "api",
                    processes.uvicorn_argv(
                        bind,
                        tls=None if bind.scheme == "http" else tls,
                        workers=int(options["workers"]),
                        access_log=bool(options["access_log"]),
                        log_level=log_level,
                    ),
                    env(),
                    grace=processes.GRACEFUL_SHUTDOWN_SECONDS + 3,
                )
                if not options["no_worker"]:
                    supervisor.start(
                        "celery-worker",
                        processes.celery_worker_argv(
                            concurrency=int(options["celery_concurrency"]),
                            log_level=log_level,
                        ),
                        env(celery=True),
                        grace=8,
                    )
                supervisor.start(
                    "celery-beat",
                    processes.celery_beat_argv(data_dir, log_level=log_level),
                    env(celery=True),
                    grace=5,
                )
                self._starting = False
                if self._stopping.is_set():
                    return 0
                return self._watch(supervisor, bind, tls.ca_cert, data_dir)
            finally:
                self._say_stopping()
                # From here on a signal only sets the flag: the stack is unwinding.
                self._starting = False
                self._stopping.set()

    def _migrate(self, database_url: str) -> None:
        """Apply the migrations (and with them the post_migrate bootstrap) here,
        in serve's own process: it has imported Django and kapi already, which
        a ``manage.py migrate`` child would do again (~1.4 s of CPU per start).

        The settings were computed when this process started, before the
        embedded PostgreSQL existed (they may name the wrong socket) and with
        the pool on; so Django is pointed at ``database_url`` first, unpooled
        (a bad URL fails at once instead of after a pool timeout, and a pool
        would leave threads behind). Afterwards this process keeps no database
        connection, and no thread, while it supervises. Unlike ``manage.py
        migrate``, ``call_command`` skips Django's system checks: nothing here
        serves a request, and the API processes load the same code.
        """
        from django.conf import settings
        from django.core.management import call_command
        from django.db import Error as DatabaseError
        from django.db import connections

        from kapi.management.database import redacted_url

        self._say("applying migrations")
        try:
            database = config.database_settings(database_url, pool=False)
        except ValueError as error:
            raise CommandError(str(error)) from error
        _use_database(settings, connections, database)
        try:
            call_command("migrate", interactive=False, verbosity=0)
        except DatabaseError as error:
            # psycopg's own connect timeout does not say where it waited.
            where = redacted_url(database_url)
            raise CommandError(f"migrate failed at {where}: {error}") from error
        finally:
            _release_connections(connections)

    def _watch(
        self, supervisor: Supervisor, bind: endpoint.Endpoint, ca: Path, data_dir: Path
    ) -> int:
        """Wait for a stop signal or a dead child; announce readiness meanwhile."""
        ready = False
        started = time.monotonic()
        warned = False
        while not self._stopping.wait(0.2 if ready else 0.05):
            self._logs.check()
            child = supervisor.exited()
            if child is not None:
                self._say(
                    f"{child.name} exited unexpectedly (code {child.proc.returncode});"
                    " stopping",
                    error=True,
                )
                return 1
            if not ready and probe_ready(bind.url, ca_file=ca, timeout=1):
                ready = True
                self._announce(bind, data_dir)
            elif not ready and not warned and time.monotonic() - started > 120:
                warned = True
                self._say("the API is not ready after 120 s; still waiting", error=True)
        return 0

    def _announce(self, bind: endpoint.Endpoint, data_dir: Path) -> None:
        manage = sys.argv[0] if sys.argv else "manage.py"
        self.stdout.write(f"kapi is ready at {bind.url}")
        self.stdout.write(
            f"kapi: get a kubeconfig with: python {manage} kubeconfig"
            f" --data-dir {data_dir} > kubeconfig"
        )
        password = data_dir / "admin-password"
        if password.exists():
            self.stdout.write(
                f"kapi: admin UI at {bind.url}/admin/ (user admin, password in {password};"
                f" more users: python {manage} createsuperuser)"
            )
        self.stdout.flush()

    def _stop_children(self, supervisor: Supervisor) -> None:
        self._say("stopping API server and Celery")
        supervisor.stop()

    def _say(self, message: str, *, error: bool = False) -> None:
        stream = self.stderr if error else self.stdout
        stream.write(f"kapi: {message}")
        stream.flush()


def _use_database(settings, connections, database: dict) -> None:
    """Point Django's default database at ``database`` (a settings dict).

    Django's ``ConnectionHandler`` reads ``DATABASES`` once, at first use, and
    keeps one ``DatabaseWrapper`` per alias (and thread) with a copy of its
    settings: defining the models already made one, unconnected. Both are
    dropped here so that the next query uses the new settings. None may be
    connected: nothing in serve uses the database before it migrates.
    """
    for alias in list(settings.DATABASES):
        if hasattr(connections._connections, alias):
            if connections[alias].connection is not None:
                raise CommandError(
                    "internal error: serve connected to the database before"
                    " pointing it at the right server"
                )
            del connections[alias]
    settings.DATABASES["default"] = database
    connections._settings = None
    connections.__dict__.pop("settings", None)  # the cached_property


def _release_connections(connections) -> None:
    """Close what migrate opened in this process: Django's connections, the
    change notifier's thread and connection and the Celery app's broker
    connections (both started by bootstrap's writes)."""
    from kapi.storage.notify import close_notifier

    for conn in connections.all(initialized_only=True):
        # Best effort: a failed or interrupted migrate's error is the one to show.
        with contextlib.suppress(Exception):
            conn.close()
        del connections[conn.alias]
    close_notifier()
    # Bootstrap's writes may have enqueued tasks (after importing the app).
    celery = sys.modules.get("kapi.celery")
    if celery is not None and celery.app._pool is not None:
        celery.app.pool.force_close_all()


def _lock_data_dir(data_dir: Path) -> int:
    """Hold ``serve.lock`` so that two ``serve``s never share a data directory."""
    fd = os.open(data_dir / "serve.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise CommandError(f"another kapi serve is using {data_dir}") from None
    os.set_inheritable(fd, False)
    return fd
