"""Live accounts end to end: a key registered (checked at the exchange, secret never shown),
a portfolio's fills mirrored as one exchange order each, faults that neither double nor lose an
order, and the kill switch, by hand and tripped by repeated errors."""

import asyncio
from decimal import Decimal
from typing import Any

from fastapi import FastAPI

from papertrade.context import AppContext
from papertrade.jobs.run import JobRun
from papertrade.kit.time import now_ms
from papertrade.live.jobs import resend_stale, send_order
from papertrade.models import LiveAccount, LiveOrder
from tests.conftest import User, sign_up
from tests.live.conftest import Exchange
from tests.trading_api.helpers import limit, market, order, set_price


async def live_orders(user: User, account_id: int) -> list[dict[str, Any]]:
    answer = await user.get(f"/v1/live/accounts/{account_id}/orders")
    assert answer.status_code == 200, answer.text
    return list(answer.json())


async def settled(
    user: User, account_id: int, count: int, within: float = 30
) -> list[dict[str, Any]]:
    """Until `count` mirrored orders exist and none is still queued."""
    deadline = asyncio.get_running_loop().time() + within
    while True:
        rows = await live_orders(user, account_id)
        if len(rows) >= count and all(r["status"] != "queued" for r in rows):
            return rows
        assert asyncio.get_running_loop().time() < deadline, rows
        await asyncio.sleep(0.1)


async def exchange_position(exchange: Exchange) -> Decimal:
    """The sub-account's BTCUSDT position (signed), as the exchange holds it."""
    answer = await exchange.user.get(f"/v1/portfolios/{exchange.portfolio_id}/positions")
    assert answer.status_code == 200, answer.text
    return sum((Decimal(str(p["quantity"])) for p in answer.json()), Decimal(0))


async def exchange_orders(exchange: Exchange) -> list[dict[str, Any]]:
    answer = await exchange.user.get("/v1/order", params={"portfolio_id": exchange.portfolio_id})
    assert answer.status_code == 200, answer.text
    return list(answer.json()["orders"])


async def registered(
    service: FastAPI, exchange: Exchange, **settings: Any
) -> tuple[User, int, int]:
    user = await sign_up(service)
    source = await user.portfolio(name="paper source")
    answer = await user.post(
        "/v1/live/accounts",
        json={
            "label": "my sub-account",
            "api_key": exchange.api_key,
            "api_secret": exchange.api_secret,
            "source_portfolio_id": source["id"],
            **settings,
        },
    )
    assert answer.status_code == 201, answer.text
    assert exchange.api_secret not in answer.text
    return user, source["id"], answer.json()["id"]


async def prices(service: FastAPI, exchange: Exchange, price: str) -> None:
    await set_price(service, "BTCUSDT", price)
    await set_price(exchange.app, "BTCUSDT", price)


async def test_a_registered_key_mirrors_each_fill_once(
    service: FastAPI, exchange: Exchange
) -> None:
    user, source, account_id = await registered(service, exchange)
    listed = (await user.get("/v1/live/accounts")).json()
    assert listed[0]["api_key_hint"] == "…" + exchange.api_key[-4:]
    assert listed[0]["withdrawals"] == "not_reported" and listed[0]["status"] == "active"

    await prices(service, exchange, "50000")
    await market(user, source, "BTCUSDT", "buy", "0.1")
    await market(user, source, "BTCUSDT", "sell", "0.04")
    rows = await settled(user, account_id, 2)
    assert [r["status"] for r in rows] == ["sent", "sent"]
    assert {r["client_order_id"] for r in rows} == {
        f"pt-{account_id}-{r['client_order_id'].rsplit('-', 1)[1]}" for r in rows
    }
    assert await exchange_position(exchange) == Decimal("0.06")
    placed = await exchange_orders(exchange)
    assert sorted(o["client_order_id"] for o in placed) == sorted(
        r["client_order_id"] for r in rows
    )

    # A close on paper is reduce-only on the exchange: it can shrink, never flip, the position.
    await order(user, portfolio_id=source, symbol="BTCUSDT", action="close", quantity="0.5")
    rows = await settled(user, account_id, 3)
    assert rows[0]["status"] == "sent", rows[0]
    assert await exchange_position(exchange) == 0


async def test_bad_keys_are_refused(service: FastAPI, exchange: Exchange) -> None:
    user = await sign_up(service)
    answer = await user.post(
        "/v1/live/accounts",
        json={"label": "x", "api_key": exchange.api_key, "api_secret": "not-the-secret"},
    )
    assert answer.status_code == 400 and answer.json()["error"] == "live_key_refused"


async def test_errors_and_a_lost_answer_neither_double_nor_lose_an_order(
    service: FastAPI, exchange: Exchange
) -> None:
    user, source, account_id = await registered(service, exchange)
    await prices(service, exchange, "50000")
    exchange.faults.errors_left = 1  # the first order attempt: HTTP 503, status unknown
    await market(user, source, "BTCUSDT", "buy", "0.1")
    rows = await settled(user, account_id, 1)
    assert rows[0]["status"] == "sent" and rows[0]["attempts"] == 2, rows[0]
    assert await exchange_position(exchange) == Decimal("0.1")  # looked up, then sent once

    exchange.faults.lose_order_answers = 1  # the order goes through, its answer is lost
    await market(user, source, "BTCUSDT", "buy", "0.05")
    rows = await settled(user, account_id, 2)
    assert rows[0]["status"] == "sent", rows[0]
    assert await exchange_position(exchange) == Decimal("0.15")  # once, not twice
    assert len(await exchange_orders(exchange)) == 2
    assert exchange.faults.orders_seen == 3  # 503, the first order, the one whose answer was lost


async def test_the_kill_switch_cancels_closes_and_stops_mirroring(
    service: FastAPI, exchange: Exchange
) -> None:
    user, source, account_id = await registered(service, exchange)
    await prices(service, exchange, "50000")
    await market(user, source, "BTCUSDT", "buy", "0.1")
    await settled(user, account_id, 1)
    await limit(exchange.user, exchange.portfolio_id, "buy", "0.01", "40000")  # resting there

    answer = await user.post("/v1/live/kill", json={"close_positions": True})
    assert answer.status_code == 200, answer.text
    assert answer.json() == [
        {
            "account_id": account_id,
            "cancelled_symbols": ["BTCUSDT"],
            "closed_symbols": ["BTCUSDT"],
            "error": None,
        }
    ]
    assert await exchange_position(exchange) == 0
    assert [o for o in await exchange_orders(exchange) if o["status"] == "new"] == []
    stopped = (await user.get(f"/v1/live/accounts/{account_id}")).json()
    assert stopped["status"] == "killed"

    await market(user, source, "BTCUSDT", "buy", "0.1")  # no longer mirrored
    await asyncio.sleep(1)
    assert len(await live_orders(user, account_id)) == 1


async def test_repeated_exchange_errors_trip_the_kill_switch(
    service: FastAPI, exchange: Exchange
) -> None:
    user, source, account_id = await registered(service, exchange)
    await prices(service, exchange, "50000")
    exchange.faults.rejections_left = 3
    for _ in range(3):
        await market(user, source, "BTCUSDT", "buy", "0.01")
    rows = await settled(user, account_id, 3)
    assert [r["status"] for r in rows] == ["rejected"] * 3
    assert "Margin is insufficient" in rows[0]["answer"]  # the exchange's answer, kept
    deadline = asyncio.get_running_loop().time() + 30
    while (account := (await user.get(f"/v1/live/accounts/{account_id}")).json())[
        "status"
    ] != "killed":  # the third refusal is recorded, then the switch fires
        assert asyncio.get_running_loop().time() < deadline, account
        await asyncio.sleep(0.1)
    assert account["kill_reason"] == "repeated exchange errors"


async def test_the_max_daily_loss_skips_the_order_and_fires_the_kill_switch(
    service: FastAPI, exchange: Exchange
) -> None:
    user, source, account_id = await registered(service, exchange, max_daily_loss="50")
    await prices(service, exchange, "50000")
    await market(user, source, "BTCUSDT", "buy", "0.1")  # the day's first equity is taken
    await settled(user, account_id, 1)
    await set_price(exchange.app, "BTCUSDT", "48000")  # the sub-account is 200 USDT down
    await market(user, source, "BTCUSDT", "buy", "0.1")
    rows = await settled(user, account_id, 2)
    assert rows[0]["status"] == "skipped" and "max daily loss" in rows[0]["answer"], rows[0]
    deadline = asyncio.get_running_loop().time() + 30
    while (account := (await user.get(f"/v1/live/accounts/{account_id}")).json())[
        "status"
    ] != "killed":  # the skip is recorded, then the switch fires (its own transaction)
        assert asyncio.get_running_loop().time() < deadline, account
        await asyncio.sleep(0.1)
    assert account["kill_reason"] == "max daily loss reached"
    assert await exchange_position(exchange) == Decimal("0.1")  # nothing more was bought


async def _no_progress(_run_id: str, _done: float, _text: str) -> None:
    return None


async def _lost_send(ctx: AppContext, account_id: int) -> int:
    """A mirrored order queued ten minutes ago whose send job never ran; its row's id."""
    async with ctx.transaction() as uow:
        row = LiveOrder(
            live_account_id=account_id,
            source_event_id=10**9,
            source_order_id=10**9,
            client_order_id=f"pt-{account_id}-{10**9}",
            symbol="BTCUSDT",
            side="buy",
            source_quantity=Decimal("0.02"),
            source_price=Decimal(50000),
            status="queued",
            attempts=0,
            answer="",
            updated_at=now_ms() - 600_000,
        )
        uow.session.add(row)
        await uow.session.flush()
        return row.id


async def test_a_queued_order_whose_send_job_was_lost_is_sent_by_the_sweep(
    service: FastAPI, exchange: Exchange
) -> None:
    """A crash between the commit that queued a mirrored order and the enqueue of its job
    leaves the row queued: the sweep sends it, once."""
    user, _source, account_id = await registered(service, exchange)
    await prices(service, exchange, "50000")
    ctx = service.state.ctx
    await _lost_send(ctx, account_id)

    run = JobRun("sweep", "live.resend_stale", 1, ctx, _no_progress)
    outcome = await resend_stale(run)
    assert outcome == {"sent": 1}, (outcome, await live_orders(user, account_id))
    assert await resend_stale(run) == {}  # nothing left to send
    assert await exchange_position(exchange) == Decimal("0.02")
    rows = await live_orders(user, account_id)
    assert rows[0]["status"] == "sent" and rows[0]["client_order_id"] == f"pt-{account_id}-{10**9}"


async def test_overlapping_attempts_place_one_order_and_record_it_sent(
    service: FastAPI, exchange: Exchange
) -> None:
    """A late send job and the sweep (or the sweeps of two processes) may take the same queued
    row at once. The exchange refuses all but one by the client order id, which means the order
    is there: the row ends `sent`, the order is placed once, and no error counts against the
    account (enough of those would trip the kill switch)."""
    user, _source, account_id = await registered(service, exchange)
    await prices(service, exchange, "50000")
    ctx = service.state.ctx
    row_id = await _lost_send(ctx, account_id)

    run = JobRun("overlap", "live.send_order", 1, ctx, _no_progress)
    outcomes = await asyncio.gather(*(send_order(run, row_id) for _ in range(3)))
    assert "sent" in outcomes and set(outcomes) <= {"sent", "nothing to send"}, outcomes
    assert await exchange_position(exchange) == Decimal("0.02")
    rows = await live_orders(user, account_id)
    assert [r["status"] for r in rows] == ["sent"], rows
    async with ctx.db.reader() as session:
        account = await session.get(LiveAccount, account_id)
        assert account is not None and account.consecutive_errors == 0
