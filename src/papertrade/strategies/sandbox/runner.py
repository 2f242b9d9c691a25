"""Run a Python strategy in its isolated process (child.py, isolation.py), bar by bar, and take
back the orders it asked for.

The server drives the run (protocol.py): it sends one bar, waits for the orders of that bar,
and only then sends the next, so the process never holds a later bar. Indicators are computed
here, on all bars, and handed over up to the current bar only. What comes back is checked
(at most 4 orders a bar, sizes and prices in range) and is all the server takes from the
process: fills, equity and metrics are computed by the backtest from these orders. A frame out
of protocol (a forged result, stray output) fails the run.

The parent enforces what the process cannot be trusted to: a wall-clock deadline (a process
that blocks uses no CPU), the size of what it may send, and the reading of how it died (a CPU
limit arrives as SIGXCPU/SIGKILL). Parent and process take turns, so both run on the CPU the
parent is on: a wake-up on the same CPU costs a few µs, across CPUs of a VM ten times more.
"""

import contextlib
import json
import math
import os
import signal
import subprocess
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from papertrade.strategies import indicators
from papertrade.strategies.sandbox import isolation, protocol

MAX_OUTPUT = 32 * 1024 * 1024  # bytes a run may send back in all
CPU_S = 10
WALL_S = 30.0
MEMORY_MB = 768
MAX_PERIOD = 10_000
INDICATORS = ("sma", "ema", "rsi", "highest", "lowest", "change_pct", "atr")
KINDS = ("long", "short", "close")
CHILD_ENV = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


class SandboxError(Exception):
    """The strategy failed, broke a rule or ran out of a limit; the message says which."""


class _Ended(Exception):
    """The process closed its pipe (it exited or was killed)."""


@dataclass(frozen=True)
class Intent:
    bar: int
    kind: str  # long | short | close
    size: float  # fraction of equity
    sl: float | None = None  # stop-loss price
    tp: float | None = None  # take-profit price
    limit: float | None = None  # a LIMIT entry at this price (good for the next bar)


def run(
    source: str,
    bars: Mapping[str, Sequence[float] | NDArray[Any]],
    params: dict[str, Any] | None = None,
    *,
    cpu_s: int = CPU_S,
    wall_s: float = WALL_S,
    memory_mb: int = MEMORY_MB,
    python_checks: bool = True,
) -> list[Intent]:
    """The strategy's orders over `bars` (columns time, open, high, low, close, volume).
    `python_checks=False` is for the tests of the OS layers alone."""
    refused = isolation.status()
    if refused:
        raise SandboxError(f"Python strategies are unavailable on this server: {refused}")
    table = np.column_stack(
        [np.asarray(bars[name], dtype=np.float64) for name in protocol.BAR_FIELDS]
    )
    header = {
        "source": source,
        "params": params or {},
        "cpu_s": cpu_s,
        "memory_mb": memory_mb,
        "bars": len(table),
        "checks": python_checks,
    }
    with _on_one_cpu():
        child = subprocess.Popen(
            isolation.command(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=CHILD_ENV,
            close_fds=True,
            start_new_session=True,
        )
        run = _Run(child, table)
        timer = threading.Timer(wall_s, run.expire)
        timer.daemon = True
        timer.start()
        try:
            return run.drive(json.dumps(header).encode())
        except _Ended:
            if run.expired:
                raise SandboxError(
                    f"time limit: the strategy ran longer than {wall_s:g} s"
                ) from None
            if run.reap() >= cpu_s:
                raise SandboxError("CPU time limit exceeded") from None
            raise SandboxError("the strategy's process ended without a result") from None
        finally:
            timer.cancel()
            run.stop()


class _Run:
    """The server's side of one run."""

    def __init__(self, child: "subprocess.Popen[bytes]", table: NDArray[np.float64]):
        assert child.stdin is not None
        assert child.stdout is not None
        self.child = child
        self.to_child, self.from_child = child.stdin.fileno(), child.stdout.fileno()
        self.table = np.ascontiguousarray(table)
        self.columns = {name: table[:, i] for i, name in enumerate(protocol.BAR_FIELDS)}
        self.computed: dict[tuple[Any, ...], NDArray[np.float64]] = {}
        self.buffer = b""
        self.received = 0
        self.expired = False
        self.reaping = threading.Lock()  # the deadline's kill never races the reaping

    def expire(self) -> None:
        self.expired = True
        self.kill()

    def kill(self) -> None:
        """SIGKILL to the run's process group, unless it was reaped (its id may be reused)."""
        with self.reaping:
            if self.child.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.child.pid, signal.SIGKILL)

    def reap(self) -> float:
        """Wait for the launcher; the CPU seconds used (its children's included: the
        launcher's exit status does not say how the strategy's process died)."""
        with self.reaping:
            if self.child.returncode is not None:
                return 0.0
            try:
                _, status, usage = os.wait4(self.child.pid, 0)
            except ChildProcessError:
                self.child.returncode = -1
                return 0.0
            self.child.returncode = os.waitstatus_to_exitcode(status)
            return float(usage.ru_utime + usage.ru_stime)

    def stop(self) -> None:
        self.kill()
        self.reap()
        for pipe in (self.child.stdin, self.child.stdout):
            if pipe is not None:
                with contextlib.suppress(OSError):
                    pipe.close()

    def drive(self, header: bytes) -> list[Intent]:
        self.send(protocol.LENGTH.pack(len(header)) + header)
        try:
            intents = self.bars()
        except BrokenPipeError:
            raise _Ended from None
        assert self.child.stdin is not None
        with contextlib.suppress(OSError):
            self.child.stdin.close()  # EOF: the run is over
        if self.take(1) != protocol.RESULT:
            raise _broke("no result after the last bar")
        _failed(self.payload())
        return intents

    def bars(self) -> list[Intent]:
        """Hand over each bar and take its answer. The hot loop: a bar frame is at most
        PIPE_BUF bytes, so one write sends it whole, and the usual answer is one byte."""
        intents: list[Intent] = []
        row = self.table.data.cast("B")
        width = self.table.shape[1] * 8
        read, write, answer, to_child = os.read, os.write, self.from_child, self.to_child
        done = protocol.DONE
        for index in range(len(self.table)):
            write(to_child, row[index * width : (index + 1) * width])
            if not self.buffer:
                chunk = read(answer, 1 << 16)
                if chunk == done:
                    continue
                if not chunk:
                    raise _Ended
                self.received += len(chunk)
                self.buffer = chunk
            while True:  # its answer for this bar, after any indicator it asks for
                tag = self.take(1)
                if tag == done:
                    break
                if tag == protocol.ORDERS:
                    intents.extend(_orders(index, self.payload()))
                    break
                if tag == protocol.INDICATOR:
                    self.answer_indicator(index, self.payload())
                    row = self.table.data.cast("B")
                    width = self.table.shape[1] * 8
                    continue
                if tag == protocol.RESULT:
                    _failed(self.payload())
                    raise _broke("it ended before the last bar")
                raise _broke(f"unexpected {tag[:1]!r}")
        return intents

    def send(self, data: bytes | memoryview) -> None:
        view = memoryview(data)
        try:
            while view:
                view = view[os.write(self.to_child, view) :]
        except (BrokenPipeError, OSError):
            raise _Ended from None

    def take(self, size: int) -> bytes:
        while len(self.buffer) < size:
            chunk = os.read(self.from_child, 1 << 16)
            if not chunk:
                raise _Ended
            self.received += len(chunk)
            if self.received > MAX_OUTPUT:
                raise SandboxError(
                    f"output limit: the strategy sent back more than {MAX_OUTPUT} bytes"
                )
            self.buffer += chunk
        taken, self.buffer = self.buffer[:size], self.buffer[size:]
        return taken

    def payload(self) -> Any:
        (size,) = protocol.LENGTH.unpack(self.take(protocol.LENGTH.size))
        if size > protocol.MAX_FRAME:
            raise _broke(f"a frame of {size} bytes")
        try:
            return json.loads(self.take(size))
        except ValueError:
            raise _broke("a frame that is not JSON") from None

    def answer_indicator(self, index: int, spec: Any) -> None:
        try:
            key = _indicator_key(spec)
            if len(self.computed) >= protocol.MAX_INDICATORS:
                raise SandboxError(f"at most {protocol.MAX_INDICATORS} indicators")
        except SandboxError as exc:
            message = str(exc).encode()
            self.send(protocol.COUNT.pack(-1) + protocol.LENGTH.pack(len(message)) + message)
            return
        values = self.computed.get(key)
        if values is None:
            values = self.computed[key] = _indicator(self.columns, key)
        self.table = np.ascontiguousarray(np.column_stack([self.table, values]))
        so_far = values[: index + 1]
        self.send(protocol.COUNT.pack(len(so_far)) + so_far.tobytes())


def _indicator_key(spec: Any) -> tuple[Any, ...]:
    if not (isinstance(spec, list) and len(spec) == 3 and isinstance(spec[1], list)):
        raise _broke("a malformed indicator request")
    name, args, source = spec
    if name not in INDICATORS:
        raise SandboxError(f"unknown indicator {name!r}")
    if source not in protocol.BAR_FIELDS[1:]:
        raise SandboxError(f"unknown source {source!r}: one of open, high, low, close, volume")
    if len(args) > 3 or not all(
        isinstance(a, int | float) and math.isfinite(a) and 1 <= a <= MAX_PERIOD for a in args
    ):
        raise SandboxError(f"an indicator's periods are whole numbers from 1 to {MAX_PERIOD}")
    return (name, tuple(int(a) for a in args), source)


def _indicator(columns: dict[str, NDArray[np.float64]], key: tuple[Any, ...]) -> NDArray[Any]:
    name, numbers, source = key
    try:
        if name == "atr":
            return indicators.atr(columns["high"], columns["low"], columns["close"], *numbers)
        values: NDArray[Any] = getattr(indicators, name)(columns[source], *numbers)
        return values
    except TypeError:
        raise SandboxError(f"{name} takes other arguments than {list(numbers)}") from None


def _orders(index: int, rows: Any) -> list[Intent]:
    if not isinstance(rows, list) or not 0 < len(rows) <= 4:
        raise _broke("orders that are not a list of 1 to 4")
    intents = []
    for row in rows:
        if not (isinstance(row, list) and len(row) == 5 and row[0] in KINDS):
            raise _broke("a malformed order")
        kind, size, *prices = row
        if not (isinstance(size, int | float) and 0 < size <= 1):
            raise _broke("an order size outside (0, 1]")
        for price in prices:
            if price is not None and not (
                isinstance(price, int | float) and math.isfinite(price) and price > 0
            ):
                raise _broke("an order price that is not a positive number")
        sl, tp, limit = (None if p is None else float(p) for p in prices)
        intents.append(Intent(index, kind, float(size), sl, tp, limit))
    return intents


def _failed(result: Any) -> None:
    if not isinstance(result, dict):
        raise _broke("a result that is not an object")
    if not result.get("ok"):
        raise SandboxError(str(result.get("error", "failed"))[:1000])


def _broke(what: str) -> SandboxError:
    return SandboxError(f"the strategy's process broke the protocol: {what}")


@contextlib.contextmanager
def _on_one_cpu() -> Iterator[None]:
    """Pin this thread (and so the process it starts) to the CPU it is on, for the run."""
    try:
        before = os.sched_getaffinity(0)
        os.sched_setaffinity(0, {_current_cpu(before)})
    except OSError:
        yield
        return
    try:
        yield
    finally:
        os.sched_setaffinity(0, before)


def _current_cpu(allowed: set[int]) -> int:
    try:
        with open("/proc/thread-self/stat") as stat:
            cpu = int(stat.read().rsplit(")", 1)[1].split()[36])  # field 39, "processor"
    except (OSError, ValueError, IndexError):
        return min(allowed)
    return cpu if cpu in allowed else min(allowed)
