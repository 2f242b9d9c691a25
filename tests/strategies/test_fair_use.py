"""Fair use of the backtest workers, through the real app: one user's queue of slow Python
backtests never stands between another user and a worker, and past the cap of backtests at once
the answer is a clear 409 that names it."""

import contextlib
from collections.abc import AsyncIterator, Hashable
from typing import Any

from fastapi import FastAPI

from papertrade.config import Settings
from papertrade.kit.time import now_ms
from papertrade.tiers.table import ELITE
from tests.conftest import User, running_app, sign_up
from tests.strategies.test_api import PYTHON_CROSS, SMA_CROSS, wait_backtest

# Burns its CPU limit on the first bar (the run then fails "CPU time limit exceeded").
SLOW = """
class Strategy:
    symbol = "BTCUSDT"
    timeframe = "1m"

    def init(self, ctx):
        pass

    def next(self, ctx):
        while True:
            pass
"""


async def strategy(user: User, kind: str, source: str) -> int:
    made = await user.post("/v1/strategies", json={"kind": kind, "name": kind, "source": source})
    assert made.status_code == 201, made.text
    return int(made.json()["id"])


def _record_turns(app: FastAPI) -> list[Hashable]:
    """The users given a turn at a sandbox process (Python backtests), in order."""
    gate = app.state.jobs.sandbox.gate
    turn = gate.turn
    turns: list[Hashable] = []

    @contextlib.asynccontextmanager
    async def recorded(user: Hashable) -> AsyncIterator[None]:
        async with turn(user):
            turns.append(user)
            yield

    gate.turn = recorded
    return turns


async def start(user: User, sid: int) -> Any:
    end = now_ms() // 60_000 * 60_000
    return await user.post(
        f"/v1/strategies/{sid}/backtests", json={"start": end - 86_400_000, "end": end}
    )


async def test_a_users_slow_backtests_do_not_hold_another_users(
    isolated_settings: Settings,
) -> None:
    settings = isolated_settings.model_copy(update={"strategy_backtest_cpu_s": 1})
    async with running_app(settings) as app:
        await _fair_use(app)


async def _fair_use(app: FastAPI) -> None:
    hog, other = await sign_up(app), await sign_up(app)
    slow = await strategy(hog, "python", SLOW)
    python = await strategy(other, "python", PYTHON_CROSS)
    dsl = await strategy(other, "dsl", SMA_CROSS)
    turns = _record_turns(app)
    queued = []
    for _ in range(ELITE.backtests_at_once):  # tiers are off here: the most generous cap
        started = await start(hog, slow)
        assert started.status_code == 202, started.text
        queued.append(started.json()["id"])
    refused = await start(hog, slow)
    assert refused.status_code == 409, refused.text
    assert refused.json()["error"] == "too_many_backtests"
    assert f"runs {ELITE.backtests_at_once} at once" in refused.json()["msg"]

    # the other user's Python and DSL backtests run while the hog's queue is still long
    mine = [(python, (await start(other, python)).json()["id"])]
    mine.append((dsl, (await start(other, dsl)).json()["id"]))
    for sid, bid in mine:
        done = await wait_backtest(other, sid, bid)
        assert done["status"] == "done", done["error"]
    # Judged by the turns at a sandbox process, not by when runs finished (a loaded machine
    # slows the other's run, not its turn). Served in order of arrival, the other's Python run
    # would have its turn after every one of the hog's queued runs; fairly, it has the process
    # the hog does not hold, while the hog's runs (a second of CPU each) still wait.
    assert other.id in turns, turns
    assert turns[: turns.index(other.id)].count(hog.id) < len(queued), turns
    listed = (await hog.get(f"/v1/strategies/{slow}/backtests")).json()
    assert len(listed) == len(queued)

    # each of the hog's runs ends at its CPU limit, as a failed backtest with the reason
    first = await wait_backtest(hog, slow, queued[0])
    assert first["status"] == "failed" and "CPU time limit" in first["error"]
    # the cap counts what is queued or running: a finished one frees a place
    again = await start(hog, slow)
    assert again.status_code == 202, again.text
