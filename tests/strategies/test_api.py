"""/v1/strategies through the real app: create, versions, visibility, validation, backtests."""

import asyncio
from decimal import Decimal
from typing import Any

import httpx
from fastapi import FastAPI

from papertrade.kit.time import now_ms
from tests.conftest import User, bearer

SMA_CROSS = (
    "symbol BTCUSDT\ntimeframe 1m\n"
    "when sma(10) crosses above sma(30) then buy 50%\n"
    "when sma(10) crosses below sma(30) then sell 50%\n"
)
PYTHON = """
import math

class Strategy:
    symbol = "ETHUSDT"
    timeframe = "4h"
    leverage = 2
    params = {"fast": 10}

    def init(self, ctx):
        self.fast = ctx.indicator("sma", self.params["fast"])

    def next(self, ctx):
        if ctx.bar.close > self.fast[-1]:
            ctx.buy(size=0.1)
"""


METHODS = "class Strategy:\n    def init(self, ctx): pass\n    def next(self, ctx): pass\n"


async def create(user: User, **body: Any) -> dict[str, Any]:
    payload = {"kind": "dsl", "name": "cross", "source": SMA_CROSS, **body}
    response = await user.post("/v1/strategies", json=payload)
    assert response.status_code == 201, response.text
    return dict(response.json())


async def test_create_read_list_and_code(
    user: User, user_factory: Any, anon: httpx.AsyncClient
) -> None:
    strategy = await create(user, description="my first")
    assert strategy["code"] == f"S{strategy['id']:07d}"
    assert (strategy["latest_version"], strategy["source"]) == (1, SMA_CROSS)
    mine = (await user.get("/v1/strategies/my")).json()
    assert [s["id"] for s in mine] == [strategy["id"]]
    # private: the owner finds it by code, nobody else does
    assert (await user.get(f"/v1/strategies/by_code/{strategy['code']}")).status_code == 200
    other: User = await user_factory()
    hidden = await other.get(f"/v1/strategies/by_code/{strategy['code']}")
    assert hidden.status_code == 404 and hidden.json()["error"] == "strategy_not_found"
    assert (await anon.get(f"/v1/strategies/{strategy['id']}")).status_code == 404
    # public: anyone, signed in or not, through both prefixes
    made_public = await user.patch(
        f"/v1/strategies/{strategy['id']}", json={"visibility": "public"}
    )
    assert made_public.json()["visibility"] == "public"
    seen = await anon.get(f"/v1/strategies/by_code/{strategy['code'].lower()}")
    assert seen.status_code == 200 and seen.json()["source"] == SMA_CROSS
    assert (await anon.get(f"/api/strategies/by_code/{strategy['code']}")).status_code == 200
    # but only the owner changes it
    refused = await other.patch(f"/v1/strategies/{strategy['id']}", json={"name": "mine now"})
    assert refused.status_code == 404


async def test_versions_are_numbered_and_immutable(user: User) -> None:
    strategy = await create(user)
    sid = strategy["id"]
    second = SMA_CROSS.replace("50%", "25%")
    added = await user.post(f"/v1/strategies/{sid}/versions", json={"source": second})
    assert added.status_code == 201 and added.json()["number"] == 2
    versions = (await user.get(f"/v1/strategies/{sid}/versions")).json()
    assert [(v["number"], v["source"]) for v in versions] == [(1, SMA_CROSS), (2, second)]
    assert versions[0]["summary"]["rules"][0]["line"] == 3
    assert (await user.get(f"/v1/strategies/{sid}")).json()["source"] == second
    assert (await user.get(f"/v1/strategies/{sid}/versions/1")).json()["source"] == SMA_CROSS
    missing = await user.get(f"/v1/strategies/{sid}/versions/9")
    assert missing.status_code == 404 and missing.json()["error"] == "strategy_version_not_found"
    bad = await user.post(f"/v1/strategies/{sid}/versions", json={"source": "when close >"})
    assert bad.status_code == 422
    assert (await user.get(f"/v1/strategies/{sid}")).json()["latest_version"] == 2


async def test_invalid_sources_are_refused_at_save_with_line_and_column(user: User) -> None:
    response = await user.post(
        "/v1/strategies",
        json={"kind": "dsl", "name": "x", "source": "symbol BTCUSDT\nwhen rsi(14) < then buy"},
    )
    assert response.status_code == 422
    body = response.json()
    assert body["error"] == "invalid_strategy_source"
    assert body["msg"].startswith("line 2:16: unexpected 'then', expected")
    assert (await user.get("/v1/strategies/my")).json() == []  # nothing was saved


async def test_python_sources_are_checked_without_running_them(user: User) -> None:
    saved = await create(user, kind="python", source=PYTHON)
    version = (await user.get(f"/v1/strategies/{saved['id']}/versions/1")).json()
    assert version["summary"]["symbol"] == "ETHUSDT"
    assert version["summary"]["settings"] == {"leverage": 2, "params": {"fast": 10}}
    cases = {
        "def init(:\n": "line 1:",
        "class Other:\n    pass\n": "class Strategy",
        "class Strategy:\n    def init(self, ctx): pass\n": "no method next",
        f"import os\n{METHODS}": "import of 'os'",
        "class Strategy:\n    def init(self, ctx): ().__class__\n    def next(self, ctx): 1\n": (
            "'__class__'"
        ),
        f"{METHODS}    leverage = compute()\n": "plain value",
    }
    for source, says in cases.items():
        response = await user.post(
            "/v1/strategies", json={"kind": "python", "name": "p", "source": source}
        )
        assert response.status_code == 422, source
        assert says in response.json()["msg"], (source, response.json())


async def test_api_keys_read_only_cannot_write(user: User) -> None:
    key = await user.api_key(scope="read")
    response = await user.client.post(
        "/v1/strategies",
        json={"kind": "dsl", "name": "x", "source": SMA_CROSS},
        headers=bearer(key),
    )
    assert response.status_code == 403 and response.json()["error"] == "read_only_key"


async def test_delete_hides_the_strategy(user: User) -> None:
    strategy = await create(user, visibility="public")
    assert (await user.delete(f"/v1/strategies/{strategy['id']}")).status_code == 200
    assert (await user.get(f"/v1/strategies/{strategy['id']}")).status_code == 404
    assert (await user.get("/v1/strategies/my")).json() == []


async def wait_backtest(user: User, sid: int, bid: int) -> dict[str, Any]:
    for _ in range(2400):  # up to two minutes on a loaded machine
        body = (await user.get(f"/v1/strategies/{sid}/backtests/{bid}")).json()
        if body["status"] in ("done", "failed"):
            return dict(body)
        await asyncio.sleep(0.05)
    raise AssertionError(f"backtest {bid} did not finish: {body}")


async def test_backtest_runs_as_a_job_and_keeps_its_result(user: User, app: FastAPI) -> None:
    strategy = await create(user)
    sid = strategy["id"]
    end = now_ms() // 60_000 * 60_000
    request = {"start": end - 3 * 86_400_000, "end": end, "initial_balance": "5000"}
    response = await user.post(f"/v1/strategies/{sid}/backtests", json=request)
    assert response.status_code == 202, response.text
    queued = response.json()
    assert queued["job_id"] and queued["version"] == 1 and queued["symbol"] == "BTCUSDT"
    done = await wait_backtest(user, sid, queued["id"])
    assert done["status"] == "done", done["error"]
    assert done["progress"] == 1.0
    result, metrics = done["result"], done["metrics"]
    for key in (
        "total_return_pct",
        "max_drawdown_pct",
        "sharpe",
        "sortino",
        "win_rate_pct",
        "profit_factor",
        "num_trades",
        "avg_trade_pct",
        "exposure_pct",
        "expectancy",
        "buy_hold_return_pct",
        "max_drawdown_duration",
        "avg_holding_time",
    ):
        assert key in metrics, key
    assert result["bars"] == 3 * 1440 - 1 or result["bars"] == 3 * 1440
    assert metrics["num_trades"] > 5
    assert set(result["assumptions"]) >= {"fill", "fees", "funding", "pyramiding"}
    trade = result["trades"][0]
    # whichever cross came first in the period opened it: the rule on line 3 or line 4
    first = trade["fills"][0]
    assert first["reason"].startswith("line 3:" if trade["side"] == "long" else "line 4:")
    assert Decimal(first["qty"]) > 0 if trade["side"] == "long" else Decimal(first["qty"]) < 0
    # fees at the default taker rate, on every fill's notional
    fee = float(trade["fills"][0]["fee"])
    notional = abs(float(trade["fills"][0]["qty"]) * float(trade["fills"][0]["price"]))
    assert abs(fee - notional * 0.0005) < 1e-5
    assert len(result["equity_curve"]) == len(result["drawdown_curve"]) > 100
    assert (
        float(result["final_equity"]) == round(result["equity_curve"][-1][1], 6)
        or abs(float(result["final_equity"]) - result["equity_curve"][-1][1]) < 1e-4
    )
    listed = (await user.get(f"/v1/strategies/{sid}/backtests")).json()
    assert [b["id"] for b in listed] == [queued["id"]] and listed[0]["metrics"] == metrics
    # the candles are cached: a second run over the same period gives the same result
    again = await user.post(f"/v1/strategies/{sid}/backtests", json=request)
    rerun = await wait_backtest(user, sid, again.json()["id"])
    assert rerun["metrics"] == metrics


PYTHON_CROSS = """
class Strategy:
    symbol = "BTCUSDT"
    timeframe = "1m"
    params = {"fast": 10, "slow": 30}

    def init(self, ctx):
        self.fast = ctx.indicator("sma", self.params["fast"])
        self.slow = ctx.indicator("sma", self.params["slow"])

    def next(self, ctx):
        if ctx.crossover(self.fast, self.slow):
            ctx.buy(size=0.5)
        elif ctx.crossover(self.slow, self.fast):
            ctx.sell(size=0.5)
"""


async def test_a_python_strategy_backtests_in_its_sandbox_like_the_same_dsl(user: User) -> None:
    """The same crossover written in Python and in the DSL gives the same trades: one book."""
    end = now_ms() // 60_000 * 60_000
    request = {"start": end - 86_400_000, "end": end}
    results = []
    for kind, source in (("python", PYTHON_CROSS), ("dsl", SMA_CROSS)):
        strategy = await create(user, kind=kind, source=source)
        started = await user.post(f"/v1/strategies/{strategy['id']}/backtests", json=request)
        assert started.status_code == 202, started.text
        done = await wait_backtest(user, strategy["id"], started.json()["id"])
        assert done["status"] == "done", done["error"]
        results.append(done["result"])
    python, dsl = results
    assert python["metrics"]["num_trades"] > 3
    assert [t["entry_time"] for t in python["trades"]] == [t["entry_time"] for t in dsl["trades"]]
    assert python["final_equity"] == dsl["final_equity"]


async def test_a_failing_python_strategy_fails_its_backtest_with_the_reason(user: User) -> None:
    broken = PYTHON_CROSS.replace("ctx.buy(size=0.5)", "raise ValueError('my bug')")
    strategy = await create(user, kind="python", source=broken)
    end = now_ms() // 60_000 * 60_000
    started = await user.post(
        f"/v1/strategies/{strategy['id']}/backtests", json={"start": end - 86_400_000, "end": end}
    )
    done = await wait_backtest(user, strategy["id"], started.json()["id"])
    assert done["status"] == "failed" and "ValueError: my bug" in done["error"]


async def test_backtest_requests_that_cannot_run(user: User) -> None:
    end = now_ms()
    body = {"start": end - 86_400_000, "end": end}
    dsl = await create(user, source="when close > open then buy")
    no_symbol = await user.post(f"/v1/strategies/{dsl['id']}/backtests", json=body)
    assert no_symbol.status_code == 422 and "symbol" in no_symbol.json()["msg"]
    unknown = await user.post(
        f"/v1/strategies/{dsl['id']}/backtests", json={**body, "symbol": "NOPEUSDT"}
    )
    assert unknown.status_code == 400 and unknown.json()["error"] == "invalid_symbol"
    backwards = await user.post(
        f"/v1/strategies/{dsl['id']}/backtests",
        json={**body, "symbol": "BTCUSDT", "end": body["start"]},
    )
    assert backwards.status_code == 422
    too_long = await user.post(
        f"/v1/strategies/{dsl['id']}/backtests",
        json={"symbol": "BTCUSDT", "timeframe": "1m", "start": 0, "end": end},
    )
    assert too_long.status_code == 422 and "at most" in too_long.json()["msg"]
