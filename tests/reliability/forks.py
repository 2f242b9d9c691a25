"""Service processes forked from a process that has imported the service once.

A new interpreter running `papertrade serve` imports the whole service first: about 2 s of CPU,
paid again at every restart of the kill -9 tests (four starts a test). multiprocessing's fork
server imports it once per test process and forks every start from there: each service is still
a process of its own, with its own environment, database connections and event loop, started
with the command's own entry point and killed with SIGKILL like any other; only the imported
modules are shared with the fork server (copy-on-write). State made at import that must differ
between processes has to be seeded again in a child (orders/lifecycle.py does so for its ids).
"""

import asyncio
import multiprocessing
import os
import runpy
import sys
from multiprocessing.process import BaseProcess
from pathlib import Path

_FORKS = multiprocessing.get_context("forkserver")
_FORKS.set_forkserver_preload(["papertrade.cli", "papertrade.app"])


def start(command: list[str], env: dict[str, str], log: str) -> BaseProcess:
    """Run `command` (`papertrade …` or `python -m module …`) in a forked process with exactly
    `env` as its environment and its output appended to `log`."""
    process = _FORKS.Process(target=_run, args=(command, env, log), name=" ".join(command))
    process.start()
    return process


def _run(command: list[str], env: dict[str, str], log: str) -> None:
    out = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    os.dup2(out, 1)
    os.dup2(out, 2)
    os.environ.clear()
    os.environ.update(env)
    if command[1:2] == ["-m"]:  # python -m module args…
        sys.argv = [command[2], *command[3:]]
        runpy.run_module(command[2], run_name="__main__", alter_sys=True)
        return
    if os.path.basename(command[0]) != "papertrade":
        raise ValueError(f"not a papertrade command: {command}")
    from papertrade import cli

    sys.argv = command
    cli.main(command[1:])


async def run(command: list[str], env: dict[str, str], log: Path, within: float) -> int | None:
    """Run `command` (as `start`) until it exits: its exit code, or None if it was still
    running after `within` seconds (it is then killed). Its output is in `log`."""
    process = start(command, env, str(log))
    await asyncio.to_thread(process.join, within)
    if process.exitcode is not None:
        return process.exitcode
    process.kill()
    await asyncio.to_thread(process.join)
    return None


async def stop(process: BaseProcess, within: float = 60) -> int | None:
    """SIGTERM, then its exit code once it has stopped; None if it had not within `within`
    seconds (it is then killed)."""
    process.terminate()
    await asyncio.to_thread(process.join, within)
    code = process.exitcode
    if code is None:
        process.kill()
        await asyncio.to_thread(process.join)
    return code
