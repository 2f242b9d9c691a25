"""The Python sandbox: an escape-attempt corpus, each contained with a clear error, the server
process unharmed and the next strategy unaffected; and the OS layer alone (seccomp and resource
limits, with the Python-level checks bypassed) holding on its own."""

import math
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from papertrade.strategies.sandbox.runner import SandboxError, run

N = 120
CLOSES = [100 + 10 * math.sin(i / 5) for i in range(N)]
BARS: dict[str, list[float]] = {
    "time": [float(i * 60_000) for i in range(N)],
    "open": CLOSES,
    "high": [c + 1 for c in CLOSES],
    "low": [c - 1 for c in CLOSES],
    "close": CLOSES,
    "volume": [1.0] * N,
}
CROSSOVER = """
class Strategy:
    symbol = "BTCUSDT"
    params = {"fast": 3, "slow": 8}

    def init(self, ctx):
        self.fast = ctx.indicator("sma", self.params["fast"])
        self.slow = ctx.indicator("sma", self.params["slow"])

    def next(self, ctx):
        if ctx.crossover(self.fast, self.slow):
            ctx.buy(size=0.5)
        elif ctx.crossover(self.slow, self.fast):
            ctx.close()
"""


def strategy(body: str, init: str = "pass") -> str:
    """A strategy whose next() (or init()) runs `body`."""
    return (
        "class Strategy:\n    def init(self, ctx):\n"
        + textwrap.indent(textwrap.dedent(init), " " * 8)
        + "\n    def next(self, ctx):\n"
        + textwrap.indent(textwrap.dedent(body), " " * 8)
        + "\n"
    )


def test_a_strategy_runs_and_its_orders_come_back() -> None:
    intents = run(CROSSOVER, BARS)
    kinds = {i.kind for i in intents}
    assert kinds == {"long", "close"}
    first_long = next(i for i in intents if i.kind == "long")
    assert first_long.size == 0.5 and 8 <= first_long.bar < N


def test_sl_tp_limit_come_back_and_the_position_follows_them() -> None:
    # bar 10: a limit far below, never reached → still flat on bar 12, so it sells there;
    # bar 20: a long with a stop just under the close → the next bar's range (±1) stops it,
    # so on bar 23 the position is flat again and it buys (size 0.3 marks it)
    body = """
    bar = int(ctx.bar.ts // 60000)
    if bar == 10:
        ctx.buy(size=0.1, limit=1.0, sl=0.5, tp=500.0)
    if bar == 12 and ctx.position.side == "flat":
        ctx.sell(size=0.1)
    if bar == 14:
        ctx.close()
    if bar == 20:
        ctx.buy(size=0.2, sl=ctx.bar.close - 0.5, tp=ctx.bar.close + 50)
    if bar == 23 and ctx.position.side == "flat":
        ctx.buy(size=0.3)
    """
    intents = run(strategy(body), BARS)
    by_bar = {i.bar: i for i in intents}
    assert (by_bar[10].limit, by_bar[10].sl, by_bar[10].tp) == (1.0, 0.5, 500.0)
    assert by_bar[12].kind == "short" and by_bar[12].limit is None
    assert by_bar[20].sl == CLOSES[20] - 0.5
    assert by_bar[23].size == 0.3
    with pytest.raises(SandboxError, match="sl is a price"):
        run(strategy("ctx.buy(size=0.1, sl=-1)"), BARS)


CORPUS = {
    "open a file": ("open('/etc/passwd').read()", "not allowed|NameError"),
    "write a file": ("open('/tmp/pwned', 'w').write('x')", "not allowed|NameError"),
    "import os": ("import os\nos.listdir('/')", "import of 'os' is not allowed"),
    "os.system": ("import os\nos.system('id')", "import of 'os' is not allowed"),
    "subprocess": ("import subprocess\nsubprocess.run(['id'])", "import of 'subprocess'"),
    "socket": ("import socket\nsocket.create_connection(('1.1.1.1', 80))", "import of 'socket'"),
    "ctypes": ("import ctypes\nctypes.CDLL(None)", "import of 'ctypes'"),
    "importlib": ("import importlib\nimportlib.import_module('os')", "import of 'importlib'"),
    "__import__": ("__import__('os')", "name '__import__' is not allowed"),
    "__subclasses__ walk": (
        "().__class__.__base__.__subclasses__()",
        "attribute '__subclasses__' is not allowed",
    ),
    "builtins via __builtins__": ("__builtins__['open']('/etc/passwd')", "'__builtins__'"),
    "eval": ("eval('1')", "NameError"),
    "getattr walk": ("getattr((), '__cl' + 'ass__')", "NameError"),
    "read /proc": ("open('/proc/self/environ').read()", "not allowed|NameError"),
    "memory bomb": ("x = bytearray(8 * 1024 ** 3)", "memory limit exceeded"),
    "list bomb": ("x = [0] * (10 ** 10)", "memory limit exceeded"),
    "infinite loop": ("while True:\n    pass", "time limit|CPU time limit"),
    "recursion": ("def f():\n    return f()\nf()", "recursion too deep"),
    "huge output": ("print('x' * 10 ** 7)", "output limit"),
    "raise": ("raise RuntimeError('my bug')", "RuntimeError: my bug"),
    "look-ahead": ("ctx.indicator('sma', 3)[1]", "no look-ahead"),
    "order flood": ("for _ in range(10):\n    ctx.buy(0.1)", "at most 4 orders a bar"),
}


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_escape_attempts_are_contained_with_a_clear_error(name: str) -> None:
    body, says = CORPUS[name]
    with pytest.raises(SandboxError) as caught:
        run(strategy(body), BARS, cpu_s=2, wall_s=60)
    message = str(caught.value)
    assert any(part in message for part in says.split("|")), message
    assert Path("/tmp/pwned").exists() is False


def test_the_server_and_the_next_strategy_are_unaffected() -> None:
    with pytest.raises(SandboxError):
        run(strategy("x = bytearray(8 * 1024 ** 3)"), BARS, cpu_s=2, wall_s=60)
    with pytest.raises(SandboxError):
        run(strategy("while True:\n    pass"), BARS, cpu_s=1, wall_s=60)
    assert run(CROSSOVER, BARS)  # a good one right after still runs
    assert os.getpid() > 0 and Path(sys.executable).exists()


# -- the OS layer alone: Python-level checks bypassed --------------------------------------------

LOCKED = """
import ctypes, os, socket, subprocess
from papertrade.strategies.sandbox.child import lock_down
libc = ctypes.CDLL(None, use_errno=True)
lock_down(5, 768)
def attempt(name, action):
    try:
        result = action()
    except (PermissionError, OSError, MemoryError) as exc:
        print(name, "BLOCKED", type(exc).__name__)
        return
    print(name, "ESCAPED" if result not in (-1, None, False) else "BLOCKED", repr(result)[:40])
attempt("open", lambda: open("/etc/passwd").read())
attempt("write", lambda: open("/tmp/sandbox-escape", "w").write("x"))
attempt("proc", lambda: open("/proc/self/environ").read())
attempt("listdir", lambda: os.listdir("/"))
attempt("stat", lambda: os.stat("/etc/passwd"))
attempt("socket", lambda: socket.socket())
attempt("fork", lambda: os.fork())
attempt("system", lambda: os.system("touch /tmp/sandbox-escape") == 0 or None)
attempt("subprocess", lambda: subprocess.run(["true"]))
attempt("exec", lambda: os.execv("/bin/true", ["true"]))
attempt("libc_open", lambda: libc.open(b"/etc/passwd", 0))
attempt("memory", lambda: bytearray(2 * 1024 ** 3))
"""


def test_seccomp_and_limits_hold_without_the_python_checks() -> None:
    done = subprocess.run(
        [sys.executable, "-I", "-c", LOCKED],
        capture_output=True,
        text=True,
        timeout=120,
        env={"OPENBLAS_NUM_THREADS": "1"},
    )
    lines = dict(line.split(" ", 1) for line in done.stdout.splitlines())
    assert set(lines) == {
        "open", "write", "proc", "listdir", "stat", "socket", "fork", "system", "subprocess",
        "exec", "libc_open", "memory",
    }, (done.stdout, done.stderr)  # fmt: skip
    escaped = {name: what for name, what in lines.items() if not what.startswith("BLOCKED")}
    assert escaped == {}, done.stdout
    assert not Path("/tmp/sandbox-escape").exists()
