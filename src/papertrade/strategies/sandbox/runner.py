"""Run a Python strategy in its own sandboxed process (child.py) and read back its orders.

One process per run, started with an empty environment and `-I` (no user site, no PYTHON*
variables), fed the request over a pipe. The parent enforces what the child cannot be trusted
to: a wall-clock deadline (an infinite loop that sleeps would not use CPU), a cap on how much it
may write back, and the reading of how it died (a CPU limit arrives as SIGXCPU/SIGKILL).
"""

import json
import os
import select
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import Any

MAX_OUTPUT = 32 * 1024 * 1024  # bytes of result a run may send back
CPU_S = 10
WALL_S = 30.0
MEMORY_MB = 768


class SandboxError(Exception):
    """The strategy failed, broke a rule or ran out of a limit; the message says which."""


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
    bars: dict[str, list[float]],
    params: dict[str, Any] | None = None,
    *,
    cpu_s: int = CPU_S,
    wall_s: float = WALL_S,
    memory_mb: int = MEMORY_MB,
) -> list[Intent]:
    request = json.dumps(
        {
            "source": source,
            "bars": bars,
            "params": params or {},
            "cpu_s": cpu_s,
            "memory_mb": memory_mb,
        }
    ).encode()
    env = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    child = subprocess.Popen(
        [sys.executable, "-I", "-m", "papertrade.strategies.sandbox.child"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
        close_fds=True,
        start_new_session=True,
    )
    try:
        output = _exchange(child, request, wall_s)
    finally:
        if child.poll() is None:
            os.killpg(child.pid, signal.SIGKILL)
        child.wait()
    return _result(output, child.returncode)


def _exchange(child: "subprocess.Popen[bytes]", request: bytes, wall_s: float) -> bytes:
    assert child.stdin is not None
    assert child.stdout is not None
    deadline = time.monotonic() + wall_s
    try:
        child.stdin.write(request)
        child.stdin.close()
    except BrokenPipeError:
        pass  # it died at start; its exit status says why
    chunks: list[bytes] = []
    size = 0
    fd = child.stdout.fileno()
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise SandboxError(f"time limit: the strategy ran longer than {wall_s:g} s")
        ready, _, _ = select.select([fd], [], [], left)
        if not ready:
            continue
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            return b"".join(chunks)
        size += len(chunk)
        if size > MAX_OUTPUT:
            raise SandboxError(f"output limit: the strategy sent back more than {MAX_OUTPUT} bytes")
        chunks.append(chunk)


def _result(output: bytes, returncode: int) -> list[Intent]:
    if returncode < 0 and not output:
        dead = -returncode
        if dead in (signal.SIGXCPU, signal.SIGKILL):
            raise SandboxError("CPU time limit exceeded")
        raise SandboxError(
            f"the strategy's process was killed by signal {signal.Signals(dead).name}"
        )
    try:
        result = json.loads(output)
    except ValueError:
        raise SandboxError("the strategy's process ended without a result") from None
    if not result.get("ok"):
        raise SandboxError(str(result.get("error", "failed"))[:1000])
    return [_intent(row) for row in result["intents"]]


def _intent(row: list[Any]) -> Intent:
    bar, kind, size, *prices = row
    sl, tp, limit = (None if p is None else float(p) for p in (*prices, None, None, None)[:3])
    return Intent(int(bar), str(kind), float(size), sl, tp, limit)
