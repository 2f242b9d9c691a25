"""`papertrade serve --workers N`: N uvicorn processes, each accepting on a socket of its own.

uvicorn's multi-process mode has every worker accept from one shared socket, and whichever worker
reaches accept() first takes the connection. Bots keep their connections open for hours, so a
burst of them arriving together stays unevenly spread: 32 benchmark connections landed 27 on one
worker and 6 on the other, and the second process then added little. Here every worker listens
on a socket of its own bound to the same port with SO_REUSEPORT, and the kernel spreads new
connections over the workers by their addresses. A worker that dies is replaced.
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


def listening_socket(host: str, port: int) -> socket.socket:
    """A socket bound to host:port that other sockets of this user may bind too."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.bind((host, port))
    return sock


def _worker(options: dict[str, Any], sock: socket.socket) -> None:
    uvicorn.Server(uvicorn.Config(**options)).run(sockets=[sock])


def run(options: dict[str, Any], count: int) -> None:
    """Serve `options` (uvicorn.Config arguments, host and port included) with `count` workers
    until SIGINT or SIGTERM, then stop them gracefully."""
    spawn = multiprocessing.get_context("spawn")
    stopping = False

    def stop(_signum: int, _frame: FrameType | None) -> None:
        nonlocal stopping
        stopping = True

    def start() -> BaseProcess:
        sock = listening_socket(options["host"], options["port"])
        process = spawn.Process(target=_worker, args=(options, sock), name="papertrade-worker")
        process.start()
        sock.close()  # the worker has its own copy; the parent accepts nothing
        return process

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    workers = [start() for _ in range(count)]
    log.info("serving on %s:%s with %d workers", options["host"], options["port"], count)
    while not stopping:
        time.sleep(0.2)
        for n, worker in enumerate(workers):
            if not stopping and not worker.is_alive():
                log.warning("worker %s exited (%s); starting another", worker.pid, worker.exitcode)
                workers[n] = start()
    for worker in workers:
        worker.terminate()  # SIGTERM: uvicorn finishes the requests in flight
    for worker in workers:
        worker.join()
