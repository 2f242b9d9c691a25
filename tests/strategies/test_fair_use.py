"""Fair use of the backtest workers, through the real app: one user's queue of slow Python
backtests never stands between another user and a worker, and past the cap of backtests at once
the answer is a clear 409 that names it."""

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
    python = await strategy(other, "python", PYTHON_CROSS)
    dsl = await strategy(other, "dsl", SMA_CROSS)
    mine = [(python, (await start(other, python)).json()["id"])]
    mine.append((dsl, (await start(other, dsl)).json()["id"]))
    others_done = 0
    for sid, bid in mine:
        done = await wait_backtest(other, sid, bid)
        assert done["status"] == "done", done["error"]
        others_done = max(others_done, done["finished_at"])
    listed = (await hog.get(f"/v1/strategies/{slow}/backtests")).json()
    # By the moments runs finished, not by when this test looked. Served in order of arrival,
    # all the hog's runs would have finished before the other user's; fairly, the other's run
    # beside the hog's, which end one a second (their CPU limit), so a loaded machine that
    # slows the other's runs lets a few of the hog's end meanwhile (4 were seen), never all.
    before = [b for b in listed if b["finished_at"] and b["finished_at"] <= others_done]
    assert len(before) < len(queued), [(b["status"], b["finished_at"]) for b in listed]
    assert len(listed) == len(queued)

    # each of the hog's runs ends at its CPU limit, as a failed backtest with the reason
    first = await wait_backtest(hog, slow, queued[0])
    assert first["status"] == "failed" and "CPU time limit" in first["error"]
    # the cap counts what is queued or running: a finished one frees a place
    again = await start(hog, slow)
    assert again.status_code == 202, again.text
