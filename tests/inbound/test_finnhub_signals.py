"""A Finnhub alert placing a signal into the portfolio its owner chose: the same order path,
de-duplication and signal history (source `finnhub`) as the tv and tg sources."""

import asyncio
import time
from decimal import Decimal
from typing import Any

import orjson
from fastapi import FastAPI

from papertrade.config import Settings
from papertrade.inbound import jobs as inbound_jobs
from papertrade.inbound import providers
from papertrade.inbound import service as inbound_service
from papertrade.inbound import signals as inbound_signals
from papertrade.models import InboundEvent
from tests.conftest import User, client_for, running_app, sign_up
from tests.jobs.helpers import wait_for_job
from tests.notifications.helpers import wait_for_inbox
from tests.trading_api.helpers import positions, set_price


async def _events(user: User, source_id: int, count: int) -> list[dict[str, Any]]:
    deadline = time.monotonic() + 15
    while True:
        page = (await user.get(f"/v1/webhook-sources/{source_id}/events")).json()["events"]
        done = [e for e in page if e["processed_at"] is not None]
        if len(done) >= count:
            return list(page)
        assert time.monotonic() < deadline, page
        await asyncio.sleep(0.05)


async def _alert(app: FastAPI, source: dict[str, Any], alert: Any) -> None:
    async with client_for(app) as finnhub:
        sent = await finnhub.post(
            f"/v1/webhook/finnhub/{source['id']}",
            json=alert,
            headers={"X-Finnhub-Secret": source["secret"]},
        )
    assert sent.status_code == 200, sent.text


async def test_an_alert_trades_the_configured_portfolio_once(isolated_settings: Settings) -> None:
    async with running_app(isolated_settings) as app:
        owner, other = await sign_up(app), await sign_up(app)
        pid = (await owner.portfolio(initial_balance="100000"))["id"]
        source = (await owner.post("/v1/webhook-sources", json={"provider": "finnhub"})).json()
        theirs = (await other.portfolio())["id"]
        stolen = await owner.client.put(
            f"/v1/webhook-sources/{source['id']}/signal",
            json={"portfolio_id": theirs},
            headers=owner.write_headers(),
        )
        assert stolen.status_code == 404 and stolen.json()["error"] == "portfolio_not_found"
        not_theirs = await other.client.put(
            f"/v1/webhook-sources/{source['id']}/signal",
            json={"portfolio_id": theirs},
            headers=other.write_headers(),
        )
        assert not_theirs.status_code == 404
        assert not_theirs.json()["error"] == "webhook_source_not_found"
        chosen = await owner.client.put(
            f"/v1/webhook-sources/{source['id']}/signal",
            json={"portfolio_id": pid, "action": "buy", "size_percent": "10"},
            headers=owner.write_headers(),
        )
        assert chosen.status_code == 200, chosen.text
        assert chosen.json()["signal_portfolio_id"] == pid
        assert chosen.json()["signal_action"] == "buy"

        await set_price(app, "BTCUSDT", "50000")
        await _alert(app, source, {"id": "f-1", "symbol": "BINANCE:BTCUSDT", "price": 50000})
        (event,) = await _events(owner, source["id"], 1)
        assert event["outcome"].startswith("notified; Signal") and "executed" in event["outcome"]
        held = await positions(owner, pid)
        assert held["BTCUSDT"]["side"] == "long"
        quantity = Decimal(str(held["BTCUSDT"]["quantity"]))
        signals = (await owner.get(f"/v1/portfolios/{pid}/signals")).json()["signals"]
        assert [(s["source"], s["status"]) for s in signals] == [("finnhub", "executed")]
        (note,) = await wait_for_inbox(owner, 1, kind="market_alert")
        assert "executed" in note["body"]

        # The alert can name its own action; one without a symbol is refused in the history.
        await _alert(app, source, {"id": "f-2", "symbol": "BTCUSDT", "action": "close"})
        await _alert(app, source, {"id": "f-3", "headline": "Fed speaks"})
        events = await _events(owner, source["id"], 3)
        assert "names no symbol" in events[0]["outcome"]
        assert await positions(owner, pid) == {}
        signals = (await owner.get(f"/v1/portfolios/{pid}/signals")).json()["signals"]
        assert [s["status"] for s in signals] == ["invalid", "executed", "executed"]
        assert quantity == Decimal("4")  # 10 % of 100000 at 20x (the default leverage) / 50000

        # The job died after trading, before marking the event processed: its retry trades
        # nothing more (the event is the de-duplication key), and once processed, nothing runs.
        async with app.state.ctx.transaction() as uow:
            row = InboundEvent(
                provider="finnhub",
                source_id=source["id"],
                user_id=owner.id,
                event_id="crash-test",
                type="price",
                body='{"symbol": "BTCUSDT"}',
                outcome="",
            )
            uow.session.add(row)
        first = await inbound_signals.trade(app.state.ctx, row.id)
        retried = await inbound_signals.trade(app.state.ctx, row.id)
        assert first is not None and "executed" in first
        assert retried == "Already handled this message."
        async with app.state.ctx.transaction() as uow:
            await providers.process(uow, row.id, retried)
        assert await inbound_signals.trade(app.state.ctx, row.id) is None
        signals = (await owner.get(f"/v1/portfolios/{pid}/signals")).json()["signals"]
        assert [s["status"] for s in signals] == [
            "duplicate",
            "executed",
            "invalid",
            "executed",
            "executed",
        ]
        assert (await positions(owner, pid))["BTCUSDT"]["side"] == "long"  # one buy, not two

        stopped = await owner.client.put(
            f"/v1/webhook-sources/{source['id']}/signal",
            json={"portfolio_id": None},
            headers=owner.write_headers(),
        )
        assert stopped.json()["signal_portfolio_id"] is None
        await _alert(app, source, {"id": "f-4", "symbol": "BTCUSDT"})
        assert (await _events(owner, source["id"], 5))[0]["outcome"] == "notified"


async def test_a_sources_alerts_trade_in_the_order_they_arrived(
    isolated_settings: Settings,
) -> None:
    """A `buy` then a `close` leave the portfolio flat, whichever job runs first: each event's
    job processes its source's earlier events first. Jobs run side by side, and a loaded run
    once recorded a later alert before an earlier one; had the `close` gone first, the `buy`
    would have left a position open."""
    async with running_app(isolated_settings) as app:
        owner = await sign_up(app)
        pid = (await owner.portfolio(initial_balance="100000"))["id"]
        source = (await owner.post("/v1/webhook-sources", json={"provider": "finnhub"})).json()
        chosen = await owner.client.put(
            f"/v1/webhook-sources/{source['id']}/signal",
            json={"portfolio_id": pid, "action": "buy", "size_percent": "10"},
            headers=owner.write_headers(),
        )
        assert chosen.status_code == 200, chosen.text
        await set_price(app, "BTCUSDT", "50000")
        ctx = app.state.ctx
        arrived = [
            await inbound_service.store(
                ctx,
                "finnhub",
                f"{source['id']}:{alert['id']}",
                "alert",
                orjson.dumps(alert),
                source_id=source["id"],
                user_id=owner.id,
            )
            for alert in (
                {"id": "o-1", "symbol": "BTCUSDT"},
                {"id": "o-2", "symbol": "BTCUSDT", "action": "close"},
            )
        ]
        jobs = app.state.jobs
        later = await jobs.enqueue(inbound_jobs.PROCESS_EVENT, event_id=arrived[1].event_id)
        await wait_for_job(app, later, "succeeded")  # the close's job, alone, first
        earlier = await jobs.enqueue(inbound_jobs.PROCESS_EVENT, event_id=arrived[0].event_id)
        await wait_for_job(app, earlier, "succeeded")

        signals = (await owner.get(f"/v1/portfolios/{pid}/signals")).json()["signals"]
        assert [s["status"] for s in signals] == ["executed", "executed"]  # the buy, the close
        assert await positions(owner, pid) == {}
        events = await _events(owner, source["id"], 2)
        assert [e["event_id"] for e in events] == [f"{source['id']}:o-2", f"{source['id']}:o-1"]
