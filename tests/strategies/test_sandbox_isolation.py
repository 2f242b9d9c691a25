"""The sandbox's OS layers, with the Python-level checks switched off (arbitrary code in the
strategy's process): nothing outside it can be signalled, slowed, inspected or outlived — a
sentinel process started here and this test process (the "server") stay untouched — and the
process never holds a bar it has not reached, nor can it forge its result."""

import json
import os
import platform
import resource
import signal
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

from papertrade.kit.time import now_ms
from papertrade.strategies.sandbox import isolation
from papertrade.strategies.sandbox.runner import SandboxError, run
from tests.conftest import User

N = 40
CLOSES = [1000.0 + i + 0.125 for i in range(N)]  # exact in binary; in no other column
BARS: dict[str, list[float]] = {
    "time": [float(i * 60_000) for i in range(N)],
    "open": [c - 0.5 for c in CLOSES],
    "high": [c + 0.25 for c in CLOSES],
    "low": [c - 0.75 for c in CLOSES],
    "close": CLOSES,
    "volume": [1.0] * N,
}
CROSS = """
class Strategy:
    symbol = "BTCUSDT"
    timeframe = "1m"

    def init(self, ctx):
        self.fast = ctx.indicator("sma", 3)

    def next(self, ctx):
        pass
"""
x86_64 = pytest.mark.skipif(platform.machine() != "x86_64", reason="x86_64 syscall numbers")

# Each is run in init() as `result = <expression>`; -1 (or an exception) is a refusal.
# {pid} is the sentinel's, {server} this process's; buffers are made by the preamble.
ESCAPES = {
    "kill": "libc.kill({pid}, 9)",
    "tgkill": "libc.syscall(234, {pid}, {pid}, 9)",
    "tkill": "libc.syscall(200, {pid}, 9)",
    "rt_sigqueueinfo": "libc.syscall(129, {pid}, 9, siginfo)",
    "prlimit64 on the sentinel": "libc.syscall(302, {pid}, 7, limit, None)",
    "prlimit64 on the server": "libc.syscall(302, {server}, 7, limit, None)",
    "setpriority on the sentinel": "libc.setpriority(0, {pid}, 19)",
    "setpriority on the server": "libc.setpriority(0, {server}, 19)",
    "sched_setscheduler on the sentinel": "libc.sched_setscheduler({pid}, 5, param)",
    "sched_setscheduler on the server": "libc.sched_setscheduler({server}, 5, param)",
    "kcmp": "libc.syscall(312, {server}, {pid}, 0, 0, 0)",
    "process_vm_writev": "libc.syscall(311, {pid}, iov, 1, iov, 1, 0)",
    "process_vm_readv": "libc.syscall(310, {server}, iov, 1, iov, 1, 0)",
    "ptrace": "libc.syscall(101, 16, {pid}, 0, 0)",
    "pidfd_open": "libc.syscall(434, {pid}, 0)",
    "personality": "libc.syscall(135, 0x0040000)",
    "unshare": "libc.syscall(272, 0x10000000)",
    "mount": "libc.mount(b'none', b'/tmp', b'tmpfs', 0, None)",
    "keyctl": "libc.syscall(250, 0, -3, 0)",
    "bpf": "libc.syscall(321, 0, attr, 64)",
    "userfaultfd": "libc.syscall(323, 0)",
    "perf_event_open": "libc.syscall(298, attr, 0, -1, -1, 0)",
    "signal the server": "libc.kill({server}, 0)",
    "another process's /proc entry": "open('/proc/{pid}/status').read()",
    "this process's /proc": "open('/proc/self/environ').read()",
    "a file": "open('/etc/hostname').read()",
    "a socket": "__import__('socket').socket()",
    "fork": "os.fork()",
}
REFUSALS = ("PermissionError", "OSError", "ModuleNotFoundError", "BlockingIOError")
PREAMBLE = """
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
siginfo = ctypes.create_string_buffer(128)
siginfo[8] = 255  # si_code SI_QUEUE (-1)
limit = (ctypes.c_uint64 * 2)(1, 1)
param = ctypes.c_int(0)
attr = ctypes.create_string_buffer(256)
attr[4] = 128  # perf_event_attr.size
chunk = ctypes.create_string_buffer(64)
iov = (ctypes.c_void_p * 2)(ctypes.cast(chunk, ctypes.c_void_p), 64)
"""


def unchecked(init: str, next_: str = "pass") -> str:
    return (
        PREAMBLE
        + "class Strategy:\n    def init(self, ctx):\n        "
        + init
        + "\n    def next(self, ctx):\n        "
        + next_
        + "\n"
    )


@pytest.fixture
def sentinel() -> Iterator["subprocess.Popen[bytes]"]:
    process = subprocess.Popen(["sleep", "300"])
    yield process
    process.kill()
    process.wait()


def standing(pid: int) -> tuple[int, tuple[int, int], int]:
    """What an escape would change: niceness, a resource limit, the scheduling policy."""
    return (
        os.getpriority(os.PRIO_PROCESS, pid),
        resource.prlimit(pid, resource.RLIMIT_NOFILE),
        os.sched_getscheduler(pid),
    )


@x86_64
@pytest.mark.parametrize("name", sorted(ESCAPES))
def test_each_escape_fails_and_leaves_the_sentinel_and_the_server_untouched(
    name: str, sentinel: "subprocess.Popen[bytes]"
) -> None:
    server = os.getpid()
    before = (standing(sentinel.pid), standing(server))
    expression = ESCAPES[name].format(pid=sentinel.pid, server=server)
    source = unchecked(
        f"result = {expression}\n"
        "        raise RuntimeError(f'RESULT {result} errno {ctypes.get_errno()}')"
    )
    with pytest.raises(SandboxError) as caught:
        run(source, BARS, cpu_s=5, wall_s=60, python_checks=False)
    message = str(caught.value)
    if "RESULT" in message:  # libc's answer: -1 is a refusal
        assert "RESULT -1 " in message, message
    else:  # Python's: the kernel refused the file, socket or process it needed
        assert message.split(":")[0] in REFUSALS, message
    assert sentinel.poll() is None, "the sentinel was killed"
    assert (standing(sentinel.pid), standing(server)) == before


def test_the_process_is_alone_and_unprivileged() -> None:
    source = unchecked(
        "raise RuntimeError(f'PID {os.getpid()} UID {os.getuid()} EUID {os.geteuid()}')"
    )
    with pytest.raises(SandboxError) as caught:
        run(source, BARS, python_checks=False)
    words = str(caught.value).split()
    assert words[words.index("PID") + 1] == "1"  # its own PID namespace: nothing else to see
    uid = int(words[words.index("UID") + 1])
    assert uid != 0
    assert uid != os.getuid() or os.getuid() != 0


# A "server" of its own: it runs one strategy in the sandbox (after the check of the machine,
# whose probe is a process too) and is then killed while the strategy still runs.
SERVER = """
import json, sys
from papertrade.strategies.sandbox import isolation
from papertrade.strategies.sandbox.runner import run
assert isolation.status() == "", isolation.status()
print("running", flush=True)
run(sys.argv[1], json.loads(sys.argv[2]), cpu_s=120, wall_s=120, python_checks=False)
"""


def children_of(root: int) -> list[int]:
    """Every process below `root`, read from /proc."""
    below: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as stat:
                parent = int(stat.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError):
            continue
        below.setdefault(parent, []).append(int(name))
    found, todo = [], [root]
    while todo:
        for pid in below.get(todo.pop(), []):
            found.append(pid)
            todo.append(pid)
    return found


def facts(pid: int) -> dict[str, str]:
    """The kernel's view of a process: its /proc status fields, its niceness and state."""
    with open(f"/proc/{pid}/status") as status:
        fields = {k: v.strip() for k, v in (ln.split(":", 1) for ln in status if ":" in ln)}
    with open(f"/proc/{pid}/stat") as stat:
        after = stat.read().rsplit(")", 1)[1].split()
    return {**fields, "nice": after[16], "state_code": after[0]}


def strategy_process(server: int, deadline_s: float = 60) -> int:
    """The strategy's own process below `server`, once it has locked itself down."""
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        for pid in children_of(server):
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
                    argv = cmdline.read().split(b"\0")
                ours = b"sandbox.child" in b" ".join(argv) and b"python" in argv[0]
                if ours and facts(pid)["Seccomp"] == "2":
                    return pid
            except (OSError, KeyError, IndexError):
                continue
        time.sleep(0.02)
    raise AssertionError("the strategy's process never locked itself down")


def dead(pid: int) -> bool:
    try:
        return facts(pid)["state_code"] in ("Z", "X")
    except OSError:
        return True


def test_the_process_is_niced_filtered_unprivileged_and_dies_with_the_server() -> None:
    """Seen from outside by the kernel's own accounts: the running strategy is niced 10 (its
    attempt to lower that was refused), under a seccomp filter, with no capabilities and no new
    privileges, as a uid of its own, PID 1 of its namespace; when the server that started it
    is killed (SIGKILL: no clean-up of its own), the strategy's process is gone too."""
    source = unchecked(
        "if libc.setpriority(0, 0, 0) != -1:\n            raise RuntimeError('it lowered')",
        "while True:\n            pass",
    )
    server = subprocess.Popen(
        [sys.executable, "-c", SERVER, source, json.dumps(BARS)], stdout=subprocess.PIPE
    )
    child = 0
    try:
        assert server.stdout is not None and server.stdout.readline() == b"running\n"
        child = strategy_process(server.pid)
        seen = facts(child)
        assert seen["nice"] == "10", seen
        assert seen["Seccomp"] == "2" and seen["NoNewPrivs"] == "1", seen
        assert int(seen["CapEff"], 16) == 0, seen
        assert int(seen["Uid"].split()[0]) >= isolation.UID_BASE, seen
        assert seen["NSpid"].split()[-1] == "1", seen  # PID 1 of its own namespace
        time.sleep(0.5)
        assert not dead(child) and facts(child)["nice"] == "10"  # still running, still niced
        server.kill()
        server.wait()
        deadline = time.monotonic() + 10
        while not dead(child):
            assert time.monotonic() < deadline, "the strategy outlived its server"
            time.sleep(0.02)
    finally:
        server.kill()
        server.wait()
        if child and not dead(child):  # a failed test leaves no strategy running
            os.kill(child, signal.SIGKILL)


def test_the_module_attribute_route_to_sys_reaches_nothing() -> None:
    """The issue's exploit, with the Python checks on: `collections._sys` leads to ctypes, and
    the kernel still refuses the signal."""
    sentinel = subprocess.Popen(["sleep", "300"])
    try:
        source = f"""
import collections

class Strategy:
    def init(self, ctx):
        sys = collections._sys
        ct = sys.modules["ctypes"]
        result = ct.CDLL(None).syscall(234, {sentinel.pid}, {sentinel.pid}, 9)
        raise RuntimeError(f"RESULT {{result}}")

    def next(self, ctx):
        pass
"""
        with pytest.raises(SandboxError, match="RESULT -1"):
            run(source, BARS)
        assert sentinel.poll() is None
    finally:
        sentinel.kill()
        sentinel.wait()


def test_no_later_bar_is_anywhere_in_the_process() -> None:
    """On some bars the strategy searches every object of its process (all that gc tracks and
    what they refer to) for the next bars' closes, as floats, in arrays and packed in bytes:
    nothing it can reach holds them."""
    wanted = [round(c * 8) for c in CLOSES]  # ints in the source: the floats only at run time
    search = f"""
import gc, struct
import numpy as np
bar = int(ctx.bar.ts // 60000)
if bar in (0, 7, 30):
    later = [w / 8 for w in {wanted!r}[bar + 1 : bar + 4]]
    packed = [struct.pack('<d', c) for c in later]
    mine = {{id(later), id(packed), *map(id, later), *map(id, packed)}}
    floats = set(later)
    found = []
    for holder in gc.get_objects():
        for o in (holder, *gc.get_referents(holder)):
            if id(o) in mine:
                continue
            if type(o) is float and o in floats:
                found.append('float')
            elif isinstance(o, np.ndarray) and any((o == v).any() for v in later):
                found.append('array')
            elif isinstance(o, (bytes, bytearray)) and any(p in o for p in packed):
                found.append('bytes')
    if found:
        raise RuntimeError(f'LOOKAHEAD on bar {{bar}}: {{sorted(set(found))}}')
""".replace("\n", "\n        ")
    source = unchecked("self.sma = ctx.indicator('sma', 3)", "pass" + search)
    intents = run(source, BARS, python_checks=False, cpu_s=60, wall_s=180)
    assert intents == []  # it searched and found nothing (a find raises)
    # the search itself finds what it looks for: the current bar's close is there
    now = source.replace("[bar + 1 : bar + 4]", "[bar : bar + 1]")
    with pytest.raises(SandboxError, match="LOOKAHEAD on bar 0"):
        run(now, BARS, python_checks=False, cpu_s=60, wall_s=180)


def test_an_indicator_asked_for_late_comes_with_its_past_only() -> None:
    source = """
import math

class Strategy:
    def init(self, ctx):
        pass

    def next(self, ctx):
        if ctx.bar.ts == 20 * 60000:
            late = ctx.indicator("sma", 1)
            if late[-1] != ctx.bar.close or late[-21] != 1000.125:
                raise RuntimeError("wrong history")
            ctx.buy(size=0.5)
"""
    intents = run(source, BARS)
    assert [(i.bar, i.kind, i.size) for i in intents] == [(20, "long", 0.5)]
    with pytest.raises(SandboxError, match="unknown indicator"):
        run(
            "class Strategy:\n    def init(self, ctx):\n        ctx.indicator('future', 1)\n"
            "    def next(self, ctx):\n        pass\n",
            BARS,
        )


@pytest.mark.parametrize(
    "forgery",
    [
        'sys.stdout.write(\'{"ok": true, "intents": [[0, "long", 1.0]]}\'); sys.stdout.flush()',
        "os.write(1, b'R' + (12).to_bytes(4, 'little') + b'{\"ok\": true}')",
        "os.write(1, b'I' + (20).to_bytes(4, 'little') + b'[[\"long\", 5.0, null, null, null]]')",
    ],
)
def test_a_forged_result_fails_the_run(forgery: str) -> None:
    source = unchecked("pass", forgery)
    with pytest.raises(SandboxError, match="broke the protocol"):
        run(source, BARS, python_checks=False)


def test_a_strategy_that_swallows_its_cpu_limit_is_still_stopped() -> None:
    source = unchecked(
        "pass",
        "while True:\n            try:\n                while True:\n                    pass\n"
        "            except BaseException:\n                pass",
    )
    with pytest.raises(SandboxError, match="CPU time limit"):
        run(source, BARS, cpu_s=1, wall_s=60, python_checks=False)


def test_sleeping_is_refused_and_the_wall_clock_still_holds() -> None:
    with pytest.raises(SandboxError, match=r"PermissionError|time limit"):
        run(unchecked("import time; time.sleep(5)"), BARS, wall_s=30, python_checks=False)


@pytest.fixture
def machine_without_unshare(
    monkeypatch: pytest.MonkeyPatch, tmp_path: "os.PathLike[str]"
) -> Iterator[None]:
    """A machine whose PATH has no util-linux: the check runs again and refuses.
    Both swaps happen under the check's lock: a check already running in a thread (an earlier
    test's backtest) would otherwise store its verdict on the real PATH over ours."""
    with isolation._status_lock:
        monkeypatch.setenv("PATH", str(tmp_path))
        monkeypatch.setattr(isolation, "_status", None)
    yield
    with isolation._status_lock:
        monkeypatch.undo()
        isolation._status = None  # checked again, on this machine, by the next run


def test_a_machine_that_cannot_isolate_refuses_python_strategies(
    machine_without_unshare: None,
) -> None:
    assert "unshare" in isolation.status()
    with pytest.raises(SandboxError, match="unavailable on this server: util-linux"):
        run(CROSS, BARS)


async def test_the_api_refuses_python_backtests_and_deployments_there(
    user: User, machine_without_unshare: None
) -> None:
    made = await user.post("/v1/strategies", json={"kind": "python", "name": "p", "source": CROSS})
    assert made.status_code == 201, made.text  # saving reads the source, runs nothing
    sid = made.json()["id"]
    end = now_ms() // 60_000 * 60_000
    backtest = await user.post(
        f"/v1/strategies/{sid}/backtests", json={"start": end - 86_400_000, "end": end}
    )
    assert backtest.status_code == 503, backtest.text
    assert backtest.json()["error"] == "python_sandbox_unavailable"
    assert "unshare" in backtest.json()["msg"]
    portfolio = await user.portfolio()
    deployed = await user.post(
        f"/v1/strategies/{sid}/deployments", json={"portfolio_id": portfolio["id"]}
    )
    assert deployed.status_code == 503, deployed.text
