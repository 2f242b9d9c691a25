"""The sandboxed process that runs one Python strategy over bars (`python -m …sandbox.child`).

Order matters: read the whole request from stdin, import everything the strategy may use, then
lock the process down — resource limits (CPU seconds, address space, no new files, no child
processes) and a seccomp filter that makes every syscall touching files, the network, other
processes or program execution fail with EPERM — and only then compile and run the user's code,
with a reduced set of builtins and an import that hands out the allowed modules only. The
result is written to stdout as one JSON line; whatever the strategy prints is captured (capped).
The OS layer is the boundary: the Python-level restrictions only make mistakes fail early.
"""

import builtins
import collections
import contextlib
import functools
import io
import itertools
import json
import math
import os
import resource
import statistics
import sys
from typing import Any

import numpy as np
import pyseccomp as seccomp  # type: ignore[import-untyped]

from papertrade.strategies import indicators, pycheck

ALLOWED_MODULES = {
    "math": math,
    "statistics": statistics,
    "collections": collections,
    "itertools": itertools,
    "functools": functools,
}
REMOVED_BUILTINS = (
    "open", "eval", "exec", "compile", "input", "breakpoint", "globals", "locals", "vars",
    "getattr", "setattr", "delattr", "memoryview", "help", "exit", "quit", "copyright",
    "credits", "license",
)  # fmt: skip
DENIED_SYSCALLS = (
    "open", "openat", "openat2", "creat", "open_by_handle_at", "name_to_handle_at",
    "stat", "lstat", "newfstatat", "statx", "access", "faccessat", "faccessat2",
    "readlink", "readlinkat", "getdents", "getdents64", "chdir", "fchdir", "chroot",
    "mkdir", "mkdirat", "rmdir", "unlink", "unlinkat", "rename", "renameat", "renameat2",
    "link", "linkat", "symlink", "symlinkat", "chmod", "fchmod", "fchmodat", "chown",
    "fchown", "lchown", "fchownat", "truncate", "mknod", "mknodat", "memfd_create",
    "socket", "socketpair", "connect", "bind", "listen", "accept", "accept4", "sendto",
    "sendmsg", "sendmmsg", "recvfrom", "recvmsg", "recvmmsg", "shutdown",
    "execve", "execveat", "fork", "vfork", "clone", "clone3", "kill", "ptrace",
    "process_vm_readv", "process_vm_writev", "pidfd_open", "pidfd_getfd", "unshare", "setns",
    "mount", "umount2", "pivot_root", "bpf", "perf_event_open", "userfaultfd",
    "io_uring_setup", "init_module", "finit_module", "personality", "setuid", "setgid",
)  # fmt: skip
MAX_PRINTED = 64_000  # characters of print() output kept
MAX_INTENTS_PER_BAR = 4


class Refused(Exception):
    """What the strategy did that is not allowed, or what it ran out of."""


class CappedText(io.StringIO):
    def write(self, text: str) -> int:
        if self.tell() + len(text) > MAX_PRINTED:
            raise Refused(f"output limit: print() wrote more than {MAX_PRINTED} characters")
        return super().write(text)


def _import(
    name: str, globals: Any = None, locals: Any = None, fromlist: Any = (), level: int = 0
) -> Any:
    module = ALLOWED_MODULES.get(name.split(".")[0])
    if module is None or level != 0:
        raise ImportError(f"import of {name!r} is not allowed in a strategy")
    return module


def lock_down(cpu_s: int, memory_mb: int) -> None:
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_s, cpu_s + 1))
    memory = memory_mb * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    resource.setrlimit(resource.RLIMIT_NOFILE, (4, 4))  # stdin, stdout, stderr (+1)
    resource.setrlimit(resource.RLIMIT_NPROC, (0, 0))
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    denied = seccomp.SyscallFilter(defaction=seccomp.ALLOW)
    for name in DENIED_SYSCALLS:
        # EPERM, so Python raises PermissionError; a name this architecture lacks is skipped
        with contextlib.suppress(RuntimeError, ValueError, OSError):
            denied.add_rule(seccomp.ERRNO(1), name)
    denied.load()


class Series:
    """An indicator as the strategy sees it: [-1] is the current bar, [-2] the one before;
    later bars do not exist yet."""

    def __init__(self, values: np.ndarray[Any, Any], clock: "Clock"):
        self._values, self._clock = values, clock

    def __getitem__(self, index: int) -> float:
        if not isinstance(index, int) or index >= 0:
            raise IndexError("use negative indexes: [-1] is the current bar (no look-ahead)")
        at = self._clock.bar + 1 + index
        return float(self._values[at]) if at >= 0 else math.nan


class Clock:
    bar = 0


class Bar:
    """The current (closed) bar."""

    open = high = low = close = volume = 0.0
    ts = 0


class Position:
    __slots__ = ("entry", "pnl_pct", "qty", "side")

    def __init__(self) -> None:
        self.side, self.qty, self.entry, self.pnl_pct = "flat", 0.0, 0.0, 0.0


class Context:
    """`ctx` of init() and next(): bars, indicators, the strategy's own position, orders."""

    def __init__(self, columns: dict[str, np.ndarray[Any, Any]], params: dict[str, Any]):
        self._columns, self.params = columns, params
        self._clock = Clock()
        self.bar = Bar()
        self.position = Position()
        self.intents: list[list[Any]] = []
        self._pending: tuple[str, float | None, float | None, float | None] | None = None

    def indicator(self, name: str, *args: float, source: str = "close") -> Series:
        columns = self._columns
        numbers = [int(a) for a in args]
        if name == "atr":
            values = indicators.atr(columns["high"], columns["low"], columns["close"], *numbers)
        elif name in ("sma", "ema", "rsi", "highest", "lowest", "change_pct"):
            values = getattr(indicators, name)(columns[source], *numbers)
        else:
            raise Refused(f"unknown indicator {name!r}")
        return Series(values, self._clock)

    def crossover(self, a: Series, b: Series) -> bool:
        return bool(a[-1] > b[-1] and a[-2] <= b[-2])

    def _order(
        self,
        kind: str,
        size: float,
        sl: float | None = None,
        tp: float | None = None,
        limit: float | None = None,
    ) -> None:
        if not 0 < size <= 1:
            raise Refused("size is a fraction of equity above 0 and at most 1")
        for name, price in (("sl", sl), ("tp", tp), ("limit", limit)):
            if price is not None and not (
                isinstance(price, int | float) and math.isfinite(price) and price > 0
            ):
                raise Refused(f"{name} is a price: a positive number")
        this_bar = sum(
            1 for intent in self.intents[-MAX_INTENTS_PER_BAR:] if intent[0] == self._clock.bar
        )
        if this_bar >= MAX_INTENTS_PER_BAR:
            raise Refused(f"at most {MAX_INTENTS_PER_BAR} orders a bar")
        stop, target, at = (None if p is None else float(p) for p in (sl, tp, limit))
        self.intents.append([self._clock.bar, kind, float(size), stop, target, at])
        self._pending = (kind, stop, target, at)

    def buy(
        self,
        size: float = 0.1,
        sl: float | None = None,
        tp: float | None = None,
        limit: float | None = None,
    ) -> None:
        """Go long: sl/tp are the stop-loss and take-profit prices, limit a LIMIT entry good
        for the next bar (all optional)."""
        self._order("long", size, sl, tp, limit)

    def sell(
        self,
        size: float = 0.1,
        sl: float | None = None,
        tp: float | None = None,
        limit: float | None = None,
    ) -> None:
        self._order("short", size, sl, tp, limit)

    def close(self, fraction: float = 1.0) -> None:
        self._order("close", 1.0)

    def _advance(self, index: int) -> None:
        """Move to bar `index`; what the previous bar asked fills at this bar's open (a limit
        only if this bar reaches it), then this bar's range may hit the stop or the target —
        the same rules the backtest kernel applies, so ctx.position follows what it does."""
        self._clock.bar = index
        columns, bar = self._columns, self.bar
        bar.open, bar.high, bar.low = (float(columns[k][index]) for k in ("open", "high", "low"))
        bar.close, bar.volume = float(columns["close"][index]), float(columns["volume"][index])
        bar.ts = int(columns["time"][index])
        position = self.position
        if self._pending is not None:
            kind, sl, tp, limit = self._pending
            self._pending = None
            if kind == "close":
                self._flat()
            elif position.side != kind:
                price = bar.open
                if limit is not None:
                    long = kind == "long"
                    reached = bar.low <= limit if long else bar.high >= limit
                    price = (min if long else max)(bar.open, limit) if reached else math.nan
                if not math.isnan(price):
                    position.side, position.qty, position.entry = kind, 1.0, price
                    self._exits = self._levels(kind == "long", price, sl, tp)
        if position.side != "flat":
            self._hit_exits()
        if position.side != "flat" and position.entry:
            move = (bar.close / position.entry - 1) * 100
            position.pnl_pct = move if position.side == "long" else -move

    _exits: tuple[float | None, float | None] = (None, None)
    exit_pcts: tuple[float | None, float | None] = (None, None)  # the class's stop/take-profit %

    def _levels(
        self, long: bool, entry: float, sl: float | None, tp: float | None
    ) -> tuple[float | None, float | None]:
        """An order's own sl/tp, else the class's percentages of the entry price."""
        stop_pct, target_pct = self.exit_pcts
        direction = 1 if long else -1
        if sl is None and stop_pct:
            sl = entry * (1 - direction * stop_pct / 100)
        if tp is None and target_pct:
            tp = entry * (1 + direction * target_pct / 100)
        return sl, tp

    def _flat(self) -> None:
        position = self.position
        position.side, position.qty, position.entry, position.pnl_pct = "flat", 0.0, 0.0, 0.0
        self._exits = (None, None)

    def _hit_exits(self) -> None:
        sl, tp = self._exits
        long, bar = self.position.side == "long", self.bar
        if sl is not None and (bar.low <= sl if long else bar.high >= sl):
            self._flat()  # the stop first when a bar touches both
        elif tp is not None and (bar.high >= tp if long else bar.low <= tp):
            self._flat()


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and value > 0 else None


def run(request: dict[str, Any]) -> dict[str, Any]:
    source = request["source"]
    pycheck.check(source)  # again, in here: the saved source is never trusted blindly
    columns = {k: np.asarray(v, dtype=np.float64) for k, v in request["bars"].items()}
    params = dict(request.get("params") or {})
    printed = CappedText()
    safe_builtins = {k: v for k, v in vars(builtins).items() if k not in REMOVED_BUILTINS}
    safe_builtins["__import__"] = _import
    safe_builtins["print"] = functools.partial(print, file=printed)
    code = compile(source, "<strategy>", "exec")
    lock_down(int(request.get("cpu_s", 10)), int(request.get("memory_mb", 768)))
    namespace: dict[str, Any] = {"__builtins__": safe_builtins, "__name__": "strategy"}
    exec(code, namespace)
    strategy = namespace["Strategy"]()
    strategy.params = {**getattr(strategy, "params", {}), **params}
    ctx = Context(columns, strategy.params)
    ctx.exit_pcts = (
        _number(getattr(strategy, "stop_loss_pct", None)),
        _number(getattr(strategy, "take_profit_pct", None)),
    )
    ctx._advance(0)
    strategy.init(ctx)
    for index in range(len(columns["close"])):
        ctx._advance(index)
        strategy.next(ctx)
    return {"ok": True, "intents": ctx.intents, "printed": printed.getvalue()[-2000:]}


def main() -> None:
    raw = sys.stdin.buffer.read()
    sys.stdin.close()
    out = os.fdopen(os.dup(1), "w")  # the result's channel; fd 1 itself is the user's no more
    try:
        result = run(json.loads(raw))
    except MemoryError:
        result = {"ok": False, "error": "memory limit exceeded"}
    except RecursionError:
        result = {"ok": False, "error": "recursion too deep"}
    except BaseException as exc:  # whatever the strategy raised is its error, reported
        result = {"ok": False, "error": f"{type(exc).__name__}: {exc}"[:1000]}
    out.write(json.dumps(result))
    out.flush()


if __name__ == "__main__":
    main()
