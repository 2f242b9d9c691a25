"""A hung test fails with what it waited on, is tried once more, and is listed at the end.

pytest-timeout (pyproject's `timeout`) ends a hung test by killing its worker, which tells
nothing about an asyncio test (its thread only idles in the event loop) and fails the whole run.
Before that, this watchdog writes every task's and thread's stack to `.pytest-hangs/` and, if the
test function itself is what waits, cancels it, so the test fails with the line it hung on, and
pytest-rerunfailures tries it once more (`--only-rerun` in pyproject): a test that hangs twice
fails the run. A fixture that hangs is left to pytest-timeout. Either way the run's summary
prints the stacks, so a rare hang is seen and can be fixed rather than lost in CI's time limit.
"""

import asyncio
import faulthandler
import re
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

HUNG = "hung: no progress"  # the cancellation's message, which --only-rerun matches
MARGIN_S = 120  # before pytest-timeout's kill


def _reports(config: pytest.Config) -> Path:
    return Path(config.rootpath) / ".pytest-hangs"


def _stop(test: str, code: object, after: float, report: Path) -> None:
    report.parent.mkdir(exist_ok=True)
    with report.open("a") as out:
        print(f"=== {test}: {HUNG} for {after:.0f} s; its tasks and threads ===", file=out)
        # every task of every loop: asyncio.all_tasks() answers only for the calling thread's loop
        for task in list(asyncio.tasks._all_tasks):  # type: ignore[attr-defined]
            if task.done():
                continue
            task.print_stack(limit=15, file=out)
            if any(frame.f_code is code for frame in task.get_stack()):
                task.get_loop().call_soon_threadsafe(task.cancel, f"{HUNG} for {after:.0f} s")
        out.flush()
        faulthandler.dump_traceback(file=out, all_threads=True)


@pytest.fixture(autouse=True)
def watch_for_a_hang(request: pytest.FixtureRequest) -> Iterator[None]:
    after = float(request.config.getini("timeout") or 0) - MARGIN_S
    if after <= 0:
        yield
        return
    name = re.sub(r"[^\w.-]+", "_", request.node.nodeid)[-150:]
    report = _reports(request.config) / f"{name}.txt"
    code = getattr(request.function, "__code__", None)
    timer = threading.Timer(after, _stop, [request.node.nodeid, code, after, report])
    timer.daemon = True
    timer.start()
    yield
    timer.cancel()


def pytest_sessionstart(session: pytest.Session) -> None:
    if not hasattr(session.config, "workerinput"):  # the controller, before any worker runs
        shutil.rmtree(_reports(session.config), ignore_errors=True)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    folder = _reports(terminalreporter.config)
    if hasattr(terminalreporter.config, "workerinput") or not folder.is_dir():
        return
    terminalreporter.section("tests that hung: their stacks (tests/hangwatch.py)")
    for report in sorted(folder.glob("*.txt")):
        terminalreporter.write(report.read_text(errors="replace")[-20000:] + "\n")
