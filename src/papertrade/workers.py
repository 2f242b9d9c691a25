"""`papertrade serve --workers N`: N uvicorn processes, each accepting on a socket of its own.

uvicorn's multi-process mode has every worker accept from one shared socket, and whichever worker
reaches accept() first takes the connection. Bots keep their connections open for hours, so a
burst of them arriving together stays unevenly spread: 32 benchmark connections landed 27 on one
worker and 6 on the other, and the second process then added little. Here every worker listens
on a socket of its own bound to the same port with SO_REUSEPORT, and the kernel spreads new
connections over the workers by their addresses. A worker that dies is replaced.

SO_REUSEPORT would also let a second `papertrade serve` of the same user join the port silently
and take half of its connections; the port is therefore checked to be free before the workers
bind it, as a single process would find it.
"""

import logging
import multiprocessing
import signal
import socket
import time
from multiprocessing.process import BaseProcess
from types import FrameType
from typing import Any

import uvicorn

log = logging.getLogger("papertrade.workers")
SUPPORTED = hasattr(socket, "SO_REUSEPORT")  # Linux, the BSDs and macOS; elsewhere uvicorn's mode
RESTART_BACKOFF_S = (1, 2, 5, 10, 30)  # a worker dying again soon after it started waits longer


def listening_socket(host: str, port: int, *, shared: bool = True) -> socket.socket:
    """A socket bound to host:port; `shared`: other sockets of this user may bind it too."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if shared:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.bind((host, port))
    return sock


def _worker(options: dict[str, Any], sock: socket.socket) -> None:
    uvicorn.Server(uvicorn.Config(**options)).run(sockets=[sock])


def run(options: dict[str, Any], count: int) -> None:
    """Serve `options` (uvicorn.Config arguments, host and port included) with `count` workers
    until SIGINT or SIGTERM, then stop them gracefully."""
    host, port = options["host"], options["port"]
    try:
        listening_socket(host, port, shared=False).close()
    except OSError as exc:
        raise SystemExit(f"cannot listen on {host}:{port}: {exc.strerror}") from exc
    spawn = multiprocessing.get_context("spawn")
    stopping = False

    def stop(_signum: int, _frame: FrameType | None) -> None:
        nonlocal stopping
        stopping = True

    def start() -> BaseProcess:
        sock = listening_socket(host, port)
        process = spawn.Process(target=_worker, args=(options, sock), name="papertrade-worker")
        process.start()
        sock.close()  # the worker has its own copy; the parent accepts nothing
        return process

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    workers = [start() for _ in range(count)]
    started = [time.monotonic()] * count
    restart_at: list[float | None] = [None] * count  # when a dead worker is started again
    quick_deaths = [0] * count
    log.info("serving on %s:%s with %d workers", host, port, count)
    while not stopping:
        time.sleep(0.2)
        now = time.monotonic()
        for n, worker in enumerate(workers):
            if stopping or worker.is_alive():
                continue
            due = restart_at[n]
            if due is None:  # found dead just now
                quick = quick_deaths[n] = quick_deaths[n] + 1 if now - started[n] < 60 else 0
                delay = RESTART_BACKOFF_S[min(quick, len(RESTART_BACKOFF_S)) - 1] if quick else 0
                due = restart_at[n] = now + delay
                log.warning(
                    "worker %s exited (%s); another in %d s", worker.pid, worker.exitcode, delay
                )
            if now >= due:
                workers[n], started[n], restart_at[n] = start(), now, None
    for worker in workers:
        worker.terminate()  # SIGTERM: uvicorn finishes the requests in flight
    for worker in workers:
        worker.join()
