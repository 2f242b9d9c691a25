"""The sandboxed process that runs one Python strategy, bar by bar (`python -m …sandbox.child`).

It is started by runner.py inside its own namespaces, as a user id of its own (isolation.py).
Order matters: read the header, import everything the strategy may use, then lock the process
down — niceness, resource limits (CPU seconds, address space, no new files, no child processes)
and an allow-list seccomp filter: every syscall outside the few the bar loop needs fails with
EPERM — and only then compile and run the user's code, with reduced builtins and an import that
hands out the allowed modules only. The OS layers are the boundary; the Python-level checks only
make mistakes fail early.

Bars arrive one at a time (protocol.py): the process holds the bars it has reached and nothing
later, and the orders it answers for a bar are all the server takes from it.
"""

import builtins
import collections
import functools
import io
import itertools
import json
import math
import os
import resource
import signal
import statistics
import sys
from typing import Any

import numpy as np
import pyseccomp as seccomp  # type: ignore[import-untyped]

from papertrade.strategies import pycheck
from papertrade.strategies.sandbox import protocol

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
# What the bar loop needs once locked down: its pipes, memory, the clock, and how a process
# ends. Everything else (files, sockets, processes, signals, identities, scheduling, limits,
# namespaces, the kernel's own interfaces) fails with EPERM: a default-deny list, not a ban list.
ALLOWED_SYSCALLS = (
    "read", "write", "readv", "writev", "close",
    "brk", "mmap", "munmap", "mremap", "madvise", "mprotect",
    "futex", "rt_sigreturn", "rt_sigprocmask", "sigaltstack", "restart_syscall",
    "clock_gettime", "clock_getres", "gettimeofday", "time", "getrusage", "times",
    "getpid", "gettid", "sched_yield", "getrandom",
    "exit", "exit_group",
)  # fmt: skip
NICENESS = 10  # below every server process; the filter refuses setpriority, so it stays
MAX_PRINTED = 64_000  # characters of print() output kept
MAX_ORDERS_PER_BAR = 4


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


def _out_of_cpu(signum: int, frame: Any) -> None:
    raise Refused("CPU time limit exceeded")


def lock_down(cpu_s: int, memory_mb: int) -> None:
    # The soft CPU limit raises in the strategy's code (as PID 1 of its namespace the process
    # would ignore an unhandled SIGXCPU); the hard one, a second later, is SIGKILL.
    signal.signal(signal.SIGXCPU, _out_of_cpu)
    os.setpriority(os.PRIO_PROCESS, 0, NICENESS)
    resource.setrlimit(resource.RLIMIT_NICE, (0, 0))  # may never lower its niceness again
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_s, cpu_s + 1))
    memory = memory_mb * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    resource.setrlimit(resource.RLIMIT_NOFILE, (4, 4))  # stdin, stdout, stderr (+1)
    resource.setrlimit(resource.RLIMIT_NPROC, (0, 0))
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    allowed = seccomp.SyscallFilter(defaction=seccomp.ERRNO(1))  # EPERM: PermissionError
    for name in ALLOWED_SYSCALLS:
        try:
            allowed.add_rule(seccomp.ALLOW, name)
        except (RuntimeError, ValueError, OSError):
            continue  # a name this architecture lacks (e.g. `time` on arm64)
    allowed.load()  # libseccomp sets no_new_privs first


class Pipe:
    """The process's side of the protocol: fd 0 in, a private copy of fd 1 out."""

    def __init__(self) -> None:
        self.incoming = 0
        self.out = os.dup(1)

    def read(self, size: int) -> bytes:
        data = os.read(self.incoming, size)
        while len(data) < size:
            more = os.read(self.incoming, size - len(data))
            if not more:
                return data
            data += more
        return data

    def send(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self.out, view) :]

    def ask_indicator(self, spec: list[Any]) -> np.ndarray[Any, Any]:
        self.send(protocol.frame(protocol.INDICATOR, json.dumps(spec).encode()))
        (count,) = protocol.COUNT.unpack(self.read(protocol.COUNT.size))
        if count < 0:
            (size,) = protocol.LENGTH.unpack(self.read(protocol.LENGTH.size))
            raise Refused(self.read(size).decode(errors="replace"))
        return np.frombuffer(self.read(count * 8), dtype=np.float64)


class Series:
    """An indicator as the strategy sees it: [-1] is the current bar, [-2] the one before;
    later bars have not arrived."""

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
    """`ctx` of init() and next(): the bar, indicators, the strategy's own position, orders."""

    def __init__(self, pipe: Pipe, bars: int, params: dict[str, Any]):
        self._pipe, self._bars, self.params = pipe, bars, params
        self._clock = Clock()
        self.bar = Bar()
        self.position = Position()
        self.orders: list[list[Any]] = []  # this bar's
        self._indicators: dict[tuple[Any, ...], Series] = {}
        self._columns: list[np.ndarray[Any, Any]] = []  # filled up to the current bar
        self._format = protocol.bar_format(0)
        self._pending: tuple[str, float | None, float | None, float | None] | None = None

    def indicator(self, name: str, *args: float, source: str = "close") -> Series:
        key = (name, *args, source)
        known = self._indicators.get(key)
        if known is not None:
            return known
        if len(self._columns) >= protocol.MAX_INDICATORS:
            raise Refused(f"at most {protocol.MAX_INDICATORS} indicators")
        so_far = self._pipe.ask_indicator([name, list(args), source])
        values = np.full(self._bars, math.nan)
        values[: len(so_far)] = so_far
        self._columns.append(values)
        self._format = protocol.bar_format(len(self._columns))
        series = self._indicators[key] = Series(values, self._clock)
        return series

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
        if len(self.orders) >= MAX_ORDERS_PER_BAR:
            raise Refused(f"at most {MAX_ORDERS_PER_BAR} orders a bar")
        stop, target, at = (None if p is None else float(p) for p in (sl, tp, limit))
        self.orders.append([kind, float(size), stop, target, at])
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

    def close(self) -> None:
        """Closes the whole position: the kernel has no partial close, so no argument pretends."""
        self._order("close", 1.0)

    def _arrive(self, index: int, frame: bytes) -> None:
        """Bar `index` has arrived: what the previous bar asked fills at its open (a limit only
        if this bar reaches it), then its range may hit the stop or the target — the rules the
        backtest kernel applies, so ctx.position follows what it does."""
        values = self._format.unpack(frame)
        self._clock.bar = index
        bar = self.bar
        bar.ts, bar.open, bar.high, bar.low, bar.close, bar.volume = values[:6]
        bar.ts = int(bar.ts)
        for column, value in zip(self._columns, values[6:], strict=True):
            column[index] = value
        self.orders = []
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


def run(pipe: Pipe, request: dict[str, Any], printed: CappedText) -> None:
    source = request["source"]
    checks = request.get("checks", True)  # off only in the tests of the OS layer alone
    if checks:
        pycheck.check(source)  # again, in here: the saved source is never trusted blindly
    code = compile(source, "<strategy>", "exec")
    strategy_builtins = dict(vars(builtins))
    if checks:
        strategy_builtins = {
            k: v for k, v in strategy_builtins.items() if k not in REMOVED_BUILTINS
        }
        strategy_builtins["__import__"] = _import
    strategy_builtins["print"] = functools.partial(print, file=printed)
    lock_down(int(request["cpu_s"]), int(request["memory_mb"]))
    namespace: dict[str, Any] = {"__builtins__": strategy_builtins, "__name__": "strategy"}
    exec(code, namespace)
    strategy = namespace["Strategy"]()
    strategy.params = {**getattr(strategy, "params", {}), **(request.get("params") or {})}
    bars = int(request["bars"])
    ctx = Context(pipe, bars, strategy.params)
    ctx.exit_pcts = (
        _number(getattr(strategy, "stop_loss_pct", None)),
        _number(getattr(strategy, "take_profit_pct", None)),
    )
    done = protocol.DONE
    for index in range(bars):
        frame = pipe.read(ctx._format.size)
        if len(frame) < ctx._format.size:
            raise Refused("the server stopped sending bars")
        ctx._arrive(index, frame)
        if index == 0:
            strategy.init(ctx)
        strategy.next(ctx)
        if ctx.orders:
            pipe.send(protocol.frame(protocol.ORDERS, json.dumps(ctx.orders).encode()))
        else:
            pipe.send(done)


def probe() -> dict[str, Any]:
    """What isolation.py checks before any strategy runs: the process is alone in its PID
    namespace, holds no capability, maps a single user id, and the filter refuses a syscall
    that is not on the list."""
    with open("/proc/self/status") as status:
        fields = dict(line.split(":", 1) for line in status.read().splitlines() if ":" in line)
    with open("/proc/self/uid_map") as uid_map:
        mapped = uid_map.read().split()
    pid, uid = os.getpid(), os.getuid()
    lock_down(2, 256)
    try:
        os.getcwd()  # not on the allow-list
        filtered = False
    except PermissionError:
        filtered = True
    return {
        "ok": True,
        "pid": pid,
        "uid": uid,
        "capabilities": fields["CapEff"].strip(),
        "uid_map": mapped,
        "filtered": filtered,
    }


def main() -> None:
    pipe = Pipe()
    (size,) = protocol.LENGTH.unpack(pipe.read(protocol.LENGTH.size))
    request = json.loads(pipe.read(size))
    printed = CappedText()
    try:
        if request.get("probe"):
            result: dict[str, Any] = probe()
        else:
            run(pipe, request, printed)
            result = {"ok": True}
    except MemoryError:
        result = {"ok": False, "error": "memory limit exceeded"}
    except RecursionError:
        result = {"ok": False, "error": "recursion too deep"}
    except BaseException as exc:  # whatever the strategy raised is its error, reported
        result = {"ok": False, "error": f"{type(exc).__name__}: {exc}"[:1000]}
    result["printed"] = printed.getvalue()[-2000:]
    pipe.send(protocol.frame(protocol.RESULT, json.dumps(result).encode()))
    sys.exit(0)


if __name__ == "__main__":
    main()
