"""Deployed strategies: evaluated on the newest closed bar, orders through the common order
path, signals recorded once per bar, refusals with reasons, failures pause with an event."""

import asyncio
import json
from decimal import Decimal
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import select, update

from papertrade.config import Settings
from papertrade.context import AppContext
from papertrade.kit.time import now_ms
from papertrade.models import Order, OutboxEvent, StrategyDeployment
from papertrade.strategies import live
from tests.conftest import User, running_app, sign_up
from tests.fakes import FakeBinanceUpstream
from tests.liveserver import live_server
from tests.ws.helpers import socket


@pytest.fixture(autouse=True)
def one_bar(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test counts the signals of one closed 1m bar: its passes, and the scheduled ones,
    see the clock as it was when the test began, so a bar that closes halfway through a slow
    test is not evaluated too. (A test that means another time passes `now`.)"""
    frozen = now_ms()
    monkeypatch.setattr(live, "now_ms", lambda: frozen)


ALWAYS_LONG = "symbol BTCUSDT\ntimeframe 1m\nwhen close > 0 then buy 0.01 qty\n"


async def deploy(user: User, source: str, portfolio_id: int, **body: Any) -> tuple[int, int]:
    created = await user.post(
        "/v1/strategies",
        json={"kind": "dsl", "name": "live", "source": source, "visibility": "public", **body},
    )
    assert created.status_code == 201, created.text
    sid = created.json()["id"]
    deployed = await user.post(
        f"/v1/strategies/{sid}/deployments", json={"portfolio_id": portfolio_id}
    )
    assert deployed.status_code == 201, deployed.text
    assert deployed.json()["status"] == "running" and deployed.json()["version"] == 1
    return sid, deployed.json()["id"]


async def rewind(ctx: AppContext, deployment_id: int) -> None:
    """Forget the last evaluated bar, so the newest closed bar is due again."""
    async with ctx.db.unit_of_work() as session:
        await session.execute(
            update(StrategyDeployment)
            .where(StrategyDeployment.id == deployment_id)
            .values(last_bar_ms=None)
        )


async def signals(client: Any, sid: int, **params: Any) -> dict[str, Any]:
    response = await client.get(f"/v1/strategies/{sid}/signals", params=params)
    assert response.status_code == 200, response.text
    return dict(response.json())


async def test_a_deployment_trades_once_per_bar_and_records_signals(
    user: User, app: FastAPI, anon: httpx.AsyncClient
) -> None:
    ctx: AppContext = app.state.ctx
    portfolio = await user.portfolio()
    sid, did = await deploy(user, ALWAYS_LONG, portfolio["id"])
    await live.evaluate_due(ctx)  # (the scheduled job may have been first: either acts once)
    await live.evaluate_due(ctx)
    history = (await signals(anon, sid))["signals"]  # public strategy: anyone reads it
    assert len(history) == 1
    (signal,) = history
    assert (
        signal["outcome"] == "executed"
        and signal["rule"] == "line 3: when close > 0 then buy 0.01 qty"
    )
    assert signal["intent"]["action"] == "buy" and signal["intent"]["qty"] == "0.01"
    async with ctx.db.reader() as session:
        order = await session.get(Order, signal["order_id"])
    assert order is not None and order.source == "strategy" and order.status == "filled"
    position = (await user.get(f"/v1/portfolios/{portfolio['id']}/positions")).json()
    assert any(
        p["symbol"] == "BTCUSDT" and Decimal(str(p["quantity"])) == Decimal("0.01")
        for p in position
    ), position
    # the same bar again (two overlapping passes): one more signal, and no pyramiding
    await rewind(ctx, did)
    await asyncio.gather(live.evaluate_due(ctx), live.evaluate_due(ctx))
    history = (await signals(anon, sid))["signals"]
    assert [s["outcome"] for s in history] == ["skipped", "executed"]
    assert history[0]["reason"] == "already long: no pyramiding"
    page = await signals(anon, sid, limit=1)
    assert len(page["signals"]) == 1 and page["next_before_id"] == history[0]["id"]
    rest = await signals(anon, sid, limit=1, before_id=page["next_before_id"])
    assert rest["signals"][0]["id"] == history[1]["id"]
    status = (await user.get(f"/v1/strategies/{sid}/deployments")).json()[0]
    assert status["last_bar_ms"] == signal["bar_time"] and status["last_error"] is None


async def test_a_refused_order_is_a_signal_with_the_reason(user: User, app: FastAPI) -> None:
    portfolio = await user.portfolio(initial_balance="100")
    source = "symbol BTCUSDT\ntimeframe 1m\nwhen close > 0 then buy 5 qty\n"
    sid, _ = await deploy(user, source, portfolio["id"])
    await live.evaluate_due(app.state.ctx)
    (signal,) = (await signals(user, sid))["signals"]
    assert signal["outcome"] == "refused" and signal["order_id"] is None
    assert "margin" in signal["reason"].lower(), signal["reason"]


async def test_pause_resume_stop(user: User, app: FastAPI) -> None:
    portfolio = await user.portfolio()
    sid, did = await deploy(user, ALWAYS_LONG.replace("0 then", "10000000 then"), portfolio["id"])
    base = f"/v1/strategies/{sid}/deployments/{did}"
    assert (await user.post(f"{base}/pause")).json()["status"] == "paused"
    await rewind(app.state.ctx, did)
    await live.evaluate_due(app.state.ctx)
    async with app.state.ctx.db.reader() as session:
        row = await session.get(StrategyDeployment, did)
    assert row is not None and row.last_bar_ms is None  # a paused deployment is not evaluated
    assert (await user.post(f"{base}/resume")).json()["status"] == "running"
    assert (await user.post(f"{base}/stop")).json()["status"] == "stopped"
    again = await user.post(f"{base}/resume")
    assert again.status_code == 409 and again.json()["error"] == "deployment_state"
    wrong = await user.post(f"{base}/explode")
    assert wrong.status_code == 422


async def test_a_failing_deployment_is_paused_with_the_reason_and_an_event(
    user: User, app: FastAPI
) -> None:
    portfolio = await user.portfolio()
    sid, did = await deploy(user, ALWAYS_LONG, portfolio["id"])
    assert (await user.delete(f"/v1/portfolios/{portfolio['id']}")).status_code == 200
    await live.evaluate_due(app.state.ctx)
    (status,) = (await user.get(f"/v1/strategies/{sid}/deployments")).json()
    assert status["status"] == "paused"
    assert "Portfolio not found" in status["last_error"]
    async with app.state.ctx.db.reader() as session:
        events = (
            await session.scalars(
                select(OutboxEvent).where(
                    OutboxEvent.type == "signal.strategy_paused",
                    OutboxEvent.portfolio_id == portfolio["id"],
                )
            )
        ).all()
    assert len(events) == 1
    assert json.loads(events[0].data)["deployment_id"] == did


async def test_deploy_refusals(user: User, user_factory: Any) -> None:
    other: User = await user_factory()
    theirs = await other.portfolio()
    created = await user.post(
        "/v1/strategies", json={"kind": "dsl", "name": "x", "source": ALWAYS_LONG}
    )
    sid = created.json()["id"]
    foreign = await user.post(
        f"/v1/strategies/{sid}/deployments", json={"portfolio_id": theirs["id"]}
    )
    assert foreign.status_code == 404 and foreign.json()["error"] == "portfolio_not_found"
    mine = await user.portfolio()
    stops = await user.post(
        f"/v1/strategies/{sid}/versions", json={"source": "trailing_stop 15%\n" + ALWAYS_LONG}
    )
    assert stops.status_code == 201
    refused = await user.post(
        f"/v1/strategies/{sid}/deployments", json={"portfolio_id": mine["id"]}
    )
    assert refused.status_code == 422, refused.text
    assert "0.1% to 10%" in refused.json()["msg"]  # Binance's bounds on a trailing stop
    older = await user.post(
        f"/v1/strategies/{sid}/deployments", json={"portfolio_id": mine["id"], "version": 1}
    )
    assert older.status_code == 201 and older.json()["version"] == 1


PYTHON_ALWAYS = """
class Strategy:
    symbol = "BTCUSDT"
    timeframe = "1m"

    def init(self, ctx):
        self.fast = ctx.indicator("sma", 5)

    def next(self, ctx):
        if self.fast[-1] > 0:
            ctx.buy(size=0.1)
"""


async def test_a_python_strategy_runs_live_in_its_sandbox(user: User, app: FastAPI) -> None:
    portfolio = await user.portfolio()
    sid, _ = await deploy(user, PYTHON_ALWAYS, portfolio["id"], kind="python")
    await live.evaluate_due(app.state.ctx)
    (signal,) = (await signals(user, sid))["signals"]
    assert signal["rule"] == "next()" and signal["outcome"] == "executed", signal
    assert signal["intent"]["qty"] == "10.0" and signal["intent"]["qty_type"] == "percent_equity"
    async with app.state.ctx.db.reader() as session:
        order = await session.get(Order, signal["order_id"])
    assert order is not None and order.source == "strategy"


async def test_a_python_strategy_that_raises_is_paused_with_its_error(
    user: User, app: FastAPI
) -> None:
    portfolio = await user.portfolio()
    broken = PYTHON_ALWAYS.replace("ctx.buy(size=0.1)", "raise KeyError('oops')")
    sid, _ = await deploy(user, broken, portfolio["id"], kind="python")
    await live.evaluate_due(app.state.ctx)
    (status,) = (await user.get(f"/v1/strategies/{sid}/deployments")).json()
    assert status["status"] == "paused"
    assert "KeyError: 'oops'" in status["last_error"]
    assert (await signals(user, sid))["signals"] == []


PYTHON_FOREVER = PYTHON_ALWAYS.replace("ctx.buy(size=0.1)", "while True:\n                pass")


async def test_a_python_strategy_over_its_time_limit_is_paused_and_the_owner_told(
    isolated_settings: Settings,
) -> None:
    settings = isolated_settings.model_copy(update={"strategy_live_time_limit_s": 1.0})
    async with running_app(settings) as app, live_server(app) as url:
        user = await sign_up(app)
        pid = (await user.portfolio())["id"]
        async with socket(url, await user.api_key("read")) as ws:
            assert (await ws.subscribe(f"signals:{pid}"))["type"] == "subscribed"
            sid, did = await deploy(user, PYTHON_FOREVER, pid, kind="python")
            await live.evaluate_due(app.state.ctx)  # (or the scheduled pass got there first)
            message = await ws.wait_type("signal.strategy_paused", within=30)
        (status,) = (await user.get(f"/v1/strategies/{sid}/deployments")).json()
        history = (await signals(user, sid))["signals"]
        await user.client.aclose()
    assert status["status"] == "paused"
    # killed at the setting's second, not the default 20
    assert "time limit: the strategy ran longer than 1 s" in status["last_error"]
    assert message["channel"] == f"signals:{pid}"
    assert message["data"]["deployment_id"] == did and message["data"]["strategy_id"] == sid
    assert message["data"]["reason"] == status["last_error"]
    assert history == []


async def test_a_5m_strategy_runs_once_per_5m_bar(isolated_settings: Settings) -> None:
    """Passes at every minute of an open 5m bar (a 1m bar closes each time) do nothing; the
    pass after the 5m bar closed evaluates it. A fake Binance on loopback serves the bars, the
    next one too before it is due, so the test does not wait five minutes."""
    fake = FakeBinanceUpstream(auto_push_ms=200)  # marks streamed: the entry fills at them
    await fake.start()
    settings = isolated_settings.model_copy(
        update={
            "market_source": "binance",
            "binance_rest_url": fake.rest_url,
            "binance_ws_url": fake.ws_url,
        }
    )
    step = 5 * 60_000
    try:
        async with running_app(settings) as app:
            ctx: AppContext = app.state.ctx
            user = await sign_up(app)
            pid = (await user.portfolio())["id"]
            await fake.wait_for_connections()
            sid, did = await deploy(user, ALWAYS_LONG.replace("1m", "5m"), pid)
            await live.evaluate_due(ctx)  # (or the scheduled pass, at the same bar)
            deployed = (await user.get(f"/v1/strategies/{sid}/deployments")).json()[0]
            first = deployed["last_bar_ms"]  # the newest closed 5m bar
            assert first % step == 0
            # every minute of the bar that is open now: nothing closed, nothing evaluated
            minutes = [first + step + m * 60_000 + 1000 for m in range(5)]
            quiet = [await live.evaluate_due(ctx, now=t) for t in minutes]
            # the minute it closes: evaluated (the scheduled pass may be first if it is now)
            await live.evaluate_due(ctx, now=first + 2 * step + 1000)
            history = (await signals(user, sid))["signals"]
            (status,) = (await user.get(f"/v1/strategies/{sid}/deployments")).json()
            await user.client.aclose()
    finally:
        await fake.stop()
    assert [q["evaluated"] for q in quiet] == [0] * 5
    assert [(s["bar_time"], s["outcome"]) for s in history] == [
        (first + step, "skipped"),
        (first, "executed"),
    ]
    assert status["timeframe"] == "5m" and status["last_bar_ms"] == first + step
    assert status["status"] == "running" and status["id"] == did


async def wait_backtest(user: User, sid: int, bid: int) -> dict[str, Any]:
    for _ in range(2400):  # up to two minutes on a loaded machine
        body = (await user.get(f"/v1/strategies/{sid}/backtests/{bid}")).json()
        if body["status"] in ("done", "failed"):
            return dict(body)
        await asyncio.sleep(0.05)
    raise AssertionError(f"backtest {bid} did not finish: {body}")


async def test_drift_report_sets_the_backtest_beside_the_live_portfolio(
    user: User, app: FastAPI
) -> None:
    portfolio = await user.portfolio()
    sid, did = await deploy(user, ALWAYS_LONG, portfolio["id"])
    early = await user.post(f"/v1/strategies/{sid}/deployments/{did}/drift")
    if early.status_code == 422:  # nothing evaluated yet (the scheduled pass may have been first)
        assert "not evaluated a bar yet" in early.json()["msg"]
    await live.evaluate_due(app.state.ctx)
    (signal,) = (await signals(user, sid))["signals"]
    started = await user.post(f"/v1/strategies/{sid}/deployments/{did}/drift")
    assert started.status_code == 202, started.text
    assert started.json()["deployment_id"] == did
    done = await wait_backtest(user, sid, started.json()["id"])
    assert done["status"] == "done", done["error"]
    report = done["result"]["drift"]
    assert report["live_from"] == report["live_to"] == signal["bar_time"]
    assert report["summary"]["live_fills"] == 1 and report["summary"]["live_refused"] == 0
    (row,) = [r for r in report["bars"] if r["bar_time"] == signal["bar_time"]]
    assert row["live"][0]["order_id"] == signal["order_id"]
    assert Decimal(row["live_fills"][0]["qty"]) == Decimal("0.01")
    # the backtest fills at the next bar's open: when that bar has closed it is matched, with
    # the slippage and latency; before, the live fill stands alone and says so
    if row["backtest"]:
        assert row["explanation"].startswith("both traded") and len(row["slippage"]) == 1
        assert row["latency_ms"][0] >= 0
    else:
        assert row["explanation"].startswith("live only")
    assert report["notes"] and report["summary"]["live_realized_pnl"] is not None
    listed = (await user.get(f"/v1/strategies/{sid}/backtests")).json()
    assert listed[0]["deployment_id"] == did


async def test_signals_reach_the_portfolio_websocket_channel(
    user: User, app: FastAPI, live_url: str
) -> None:
    portfolio = await user.portfolio()
    pid = portfolio["id"]
    async with socket(live_url, await user.api_key()) as ws:
        reply = await ws.subscribe(f"signals:{pid}")
        assert reply["type"] == "subscribed", reply
        sid, did = await deploy(user, ALWAYS_LONG, pid)
        await live.evaluate_due(app.state.ctx)
        message = await ws.wait_type("signal.strategy", within=30)
    assert message["channel"] == f"signals:{pid}"
    data = message["data"]
    assert (data["strategy_id"], data["deployment_id"]) == (sid, did)
    assert data["outcome"] == "executed" and data["order_id"]
