"""uvicorn with one listening socket per worker process (``SO_REUSEPORT``).

``python -m kapi.runtime.apiserver`` takes uvicorn's command line and runs
uvicorn's own multi-process supervisor, with one difference: each worker
listens on its own socket bound to the same address with ``SO_REUSEPORT``, so
the kernel spreads new connections over the workers by their addresses.

With uvicorn's single shared socket, every worker waits on one accept queue
and whichever wakes first takes the connections that are waiting, several at
a time. A client that opens its connections in a burst (kubectl's informers at
start-up, any pooled HTTP client, the benchmark's 16) lands them all on one
process, whose interpreter lock then serves everything on one core while the
other workers idle: measured under ``kbench create`` c=16, one worker took
6.9 s of CPU, the other 0.6 s. A Python process serves about one core, so
on the 2-core machine that was kapi's throughput ceiling.

The supervisor still binds the address first (with ``SO_REUSEPORT`` too, so
the workers can join it) but never listens on that socket: only listening
sockets take connections, so it just holds the port while workers come and
go (uvicorn replaces one that dies or misses its health check). Before that
it refuses a port that another socket holds (``endpoint.address_in_use``):
with ``SO_REUSEPORT`` it would otherwise join a running server's port and
take a share of its connections.

At shutdown, idle keep-alive connections are closed without waiting for the
client's TLS close_notify (``_kapi_connections``), as kube-apiserver
closes them: an idle client no longer holds a stop for the whole
graceful-shutdown timeout. A connection whose TLS handshake ends after the
shutdown began is shut down as it is made, like those open before. Each
connection writes through a :class:`kapi.runtime.coalescing.CoalescingTransport`:
a response's headers and body leave in one TLS record.
"""

from __future__ import annotations

import importlib
import logging
import multiprocessing
import socket
import sys

from uvicorn.config import STARTUP_FAILURE, Config
from uvicorn.server import Server
from uvicorn.supervisors import multiprocess

from kapi.runtime.affinity import pin_worker
from kapi.runtime.coalescing import CoalescingTransport
from kapi.runtime.endpoint import address_in_use
from kapi.runtime.parent import follow_parent, follow_serve

__all__ = ["ReusePortConfig", "ReusePortServer", "main"]

logger = logging.getLogger("uvicorn.error")

# The module: ``uvicorn.main`` as an attribute of the package is its function.
uvicorn_main = importlib.import_module("uvicorn.main")


def _reuse_port_socket(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if host and ":" in host else socket.AF_INET
    sock = socket.socket(family=family)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.bind((host, port))
    return sock


#: The attribute of uvicorn's ``ServerState`` (shared by a worker's
#: connections) that :class:`ReusePortServer` sets as its shutdown starts.
SHUTTING_DOWN = "kapi_shutting_down"

#: At shutdown, how long an idle keep-alive TLS connection has to answer the
#: server's close_notify before it is dropped.
IDLE_CLOSE_SECONDS = 0.5


def _kapi_connections(protocol: type) -> type:
    """``protocol`` whose writes are coalesced
    (:class:`kapi.runtime.coalescing.CoalescingTransport`) and whose shutdown
    does not wait on idle clients.

    At shutdown uvicorn closes each idle keep-alive connection, and waits (up to
    its graceful-shutdown timeout, 5 s here) until every connection is gone. A
    TLS close sends close_notify and then waits for the client's, which an idle
    client (a pooled connection, kubectl's, an informer's between requests)
    never sends: one such client held each API worker for the whole timeout,
    and ``serve`` for as long. kube-apiserver (Go's ``http.Server.Shutdown``)
    sends close_notify and closes; here the connection gets
    :data:`IDLE_CLOSE_SECONDS` to answer, then is dropped. Connections in the
    middle of a response (watches included) are left to finish as before."""

    class KapiConnection(protocol):  # type: ignore[misc, valid-type]
        def connection_made(self, transport) -> None:  # type: ignore[no-untyped-def]
            super().connection_made(transport)
            self.transport = CoalescingTransport(transport, self.loop)
            # uvicorn shuts down the connections it has when the shutdown
            # starts; one accepted before the listener closed but made (its TLS
            # handshake done) after would be served on, keep-alive, until the
            # graceful-shutdown timeout (the stop then ends in an error).
            if getattr(self.server_state, SHUTTING_DOWN, False):
                self.shutdown()

        def shutdown(self) -> None:
            idle = self.cycle is None or self.cycle.response_complete
            super().shutdown()
            if idle:
                self.loop.call_later(IDLE_CLOSE_SECONDS, self._drop_if_open)

        def _drop_if_open(self) -> None:
            if self in self.connections:
                self.transport.abort()

    KapiConnection.__qualname__ = f"KapiConnection[{protocol.__name__}]"
    return KapiConnection


class ReusePortConfig(Config):
    """uvicorn's configuration whose TCP socket may be shared by port, and
    whose connections do not hold a shutdown while idle
    (:func:`_kapi_connections`)."""

    def load(self) -> None:
        super().load()
        self.http_protocol_class = _kapi_connections(self.http_protocol_class)

    def bind_socket(self) -> socket.socket:
        if self.uds is not None or self.fd is not None:
            return super().bind_socket()
        problem = address_in_use(self.host, self.port)
        if problem:
            logger.error(problem)
            sys.exit(STARTUP_FAILURE)
        try:
            sock = _reuse_port_socket(self.host, self.port)
        except OSError as exc:
            logger.error(exc)
            sys.exit(STARTUP_FAILURE)
        protocol = "https" if self.is_ssl else "http"
        logger.info("Uvicorn running on %s://%s:%d (one socket per worker)", protocol, self.host, sock.getsockname()[1])
        sock.set_inheritable(True)
        return sock


class ReusePortServer(Server):
    """A worker: stops when its supervisor dies, listens on a socket of its
    own instead of the supervisor's, runs on a CPU of its own where the
    workers cover the CPUs
    (:mod:`kapi.runtime.affinity`), and tells its connections when the
    shutdown starts (see :func:`_kapi_connections`)."""

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        setattr(self.server_state, SHUTTING_DOWN, True)
        await super().shutdown(sockets)

    def run(self, sockets: list[socket.socket] | None = None) -> None:
        config = self.config
        supervisor = multiprocessing.parent_process()
        if supervisor is not None and supervisor.pid is not None:
            follow_parent(supervisor.pid)  # killed outright, it cannot stop us
        pin_worker(config.workers)
        if sockets and isinstance(config, ReusePortConfig) and config.uds is None and config.fd is None:
            port = sockets[0].getsockname()[1]
            for inherited in sockets:
                inherited.close()
            sockets = [_reuse_port_socket(config.host, port)]
        return super().run(sockets)


# The supervisor builds its configuration with ``uvicorn.main.Config`` and each
# worker's server with ``multiprocess.Server``. A worker process is spawned:
# unpickling its ReusePortConfig imports this module, so the worker's
# ``multiprocess.Server`` is ours too. A single worker runs ``uvicorn.main.Server``.
uvicorn_main.Config = ReusePortConfig
uvicorn_main.Server = ReusePortServer
multiprocess.Server = ReusePortServer


def main() -> None:
    follow_serve()
    uvicorn_main.main()


if __name__ == "__main__":
    # Run the importable copy of this module, so that the workers unpickle
    # ``kapi.runtime.apiserver.ReusePortConfig``, not a class of ``__main__``.
    from kapi.runtime import apiserver

    apiserver.main()
