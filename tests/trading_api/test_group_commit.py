"""Orders placed together are committed together, yet each is answered and refused on its own."""

import asyncio
import uuid
from collections import Counter
from decimal import Decimal
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import func, select, update

from papertrade.config import Settings
from papertrade.models import Order, Portfolio
from papertrade.orders import workset
from papertrade.orders.record import COLUMNS
from papertrade.uow import SyncWork
from tests.conftest import ORIGIN, User, bearer, client_for, running_app, sign_up
from tests.trading_api.helpers import (
    equity,
    limit,
    order,
    positions,
    set_price,
    wait_for_status,
)


def _market(pid: int, quantity: str, **extra: Any) -> dict[str, Any]:
    return {
        "portfolio_id": pid,
        "symbol": "BTCUSDT",
        "side": "buy",
        "type": "market",
        "quantity": quantity,
        **extra,
    }


async def test_a_burst_is_answered_order_by_order(user: User, app: FastAPI) -> None:
    await set_price(app, "BTCUSDT", "50000")
    rich = (await user.portfolio(initial_balance="1000000"))["id"]
    poor = (await user.portfolio(initial_balance="300"))["id"]
    key = await user.api_key("write")
    twin = f"twin-{uuid.uuid4().hex[:8]}"
    bodies = (
        [_market(rich, "0.01") for _ in range(20)]
        + [_market(rich, "0.01", client_order_id=twin) for _ in range(3)]
        + [_market(poor, "0.1") for _ in range(3)]  # 250 USDT margin each: one fits in 300
        + [_market(rich, "0.0101")]  # off the 0.001 step
        + [_market(rich, "0.01", symbol="NOPEUSDT")]
    )
    async with client_for(app) as client:
        responses = await asyncio.gather(
            *(client.post("/v1/order", json=body, headers=bearer(key)) for body in bodies)
        )
    outcomes = [r.json().get("error", r.status_code) for r in responses]
    assert outcomes[:20] == [201] * 20
    assert sorted(map(str, outcomes[20:23])) == ["201"] + ["duplicate_client_order_id"] * 2
    assert sorted(map(str, outcomes[23:26])) == [
        "201",
        "insufficient_margin",
        "insufficient_margin",
    ]
    assert outcomes[26] == "qty_off_step"
    assert outcomes[27] == "invalid_symbol"
    ids = [r.json()["id"] for r in responses if r.status_code == 201]
    assert len(set(ids)) == len(ids) == 22  # every accepted order has an id of its own
    assert (await positions(user, rich))["BTCUSDT"]["quantity"] == 0.21
    assert (await positions(user, poor))["BTCUSDT"]["quantity"] == 0.1
    for pid in (rich, poor):
        account = await equity(user, pid)
        assert Decimal(str(account["available"])) >= 0


async def test_the_next_order_sees_what_was_changed_elsewhere(user: User, app: FastAPI) -> None:
    """On SQLite the writer thread remembers portfolios from one group commit to the next. A fill
    by the engine or a top-up, committed in between, must not be hidden by that memory."""
    await set_price(app, "BTCUSDT", "50000")
    pid = (await user.portfolio(initial_balance="1000"))["id"]
    market = {"portfolio_id": pid, "symbol": "BTCUSDT", "type": "market"}
    await order(user, **market, side="buy", quantity="0.01")
    resting = await limit(user, pid, "buy", "0.01", "49000")
    await set_price(app, "BTCUSDT", "48900")
    await wait_for_status(user, resting["id"], "filled")

    closed = await order(user, **market, action="close", quantity="1")  # capped to the position
    assert closed["side"] == "sell" and closed["quantity"] == 0.02  # both fills, not the first
    assert (await positions(user, pid)).get("BTCUSDT", {"quantity": 0})["quantity"] == 0

    # 1 BTC at 20× needs about 2,445 USDT of margin: more than the first balance.
    topped = await user.post(f"/v1/portfolios/{pid}/top-up", json={"amount": "5000"})
    assert topped.status_code == 200, topped.text
    big = await order(user, **market, side="buy", quantity="1")
    assert big["status"] == "filled"
    account = await equity(user, pid)
    assert account["balance"] == account["ledger_balance"]


def _loaded(uow: SyncWork, portfolio_id: int) -> workset.PortfolioState:
    """The portfolio's trading state as a group commit loads it (remembered or read)."""
    workset.load(uow, [portfolio_id])
    state = workset.get(uow, portfolio_id)
    assert state is not None
    return state


async def test_a_failed_unit_of_work_leaves_nothing_remembered(user: User, app: FastAPI) -> None:
    """A group that fails after changing a portfolio in memory (here: margin reserved for a
    resting order) must not hand that change to the next group; the database never saw it."""
    pid = (await user.portfolio(initial_balance="1000"))["id"]
    ctx = app.state.ctx

    def spoil(uow: SyncWork) -> None:
        state = _loaded(uow, pid)
        state.open_margin += Decimal("600")
        state.portfolio.balance += Decimal("1")
        raise RuntimeError("the commit failed")

    def read(uow: SyncWork) -> tuple[Decimal, Decimal]:
        state = _loaded(uow, pid)
        return state.open_margin, state.portfolio.balance

    await ctx.run_unit(read, remember=True)  # remembered from here on (SQLite)
    with pytest.raises(RuntimeError):
        await ctx.run_unit(spoil, remember=True)
    reserved, balance = await ctx.run_unit(read, remember=True)
    assert (reserved, balance) == (Decimal("0"), Decimal("1000"))


async def test_a_unit_of_work_that_does_not_remember_makes_the_writer_forget(
    user: User, app: FastAPI
) -> None:
    """A unit of work that changes a portfolio without keeping the memory current (here: a plain
    UPDATE on the writer's own connection, which no data_version sees) must not leave the next
    group a stale balance."""
    pid = (await user.portfolio(initial_balance="1000"))["id"]
    ctx = app.state.ctx

    def balance(uow: SyncWork) -> Decimal:
        return _loaded(uow, pid).portfolio.balance

    def top_up(uow: SyncWork) -> None:
        uow.session.execute(
            update(Portfolio).where(Portfolio.id == pid).values(balance=Decimal("1500"))
        )

    assert await ctx.run_unit(balance, remember=True) == Decimal("1000")
    await ctx.run_unit(top_up)
    assert await ctx.run_unit(balance, remember=True) == Decimal("1500")


_POISON_SQLITE = """
CREATE TRIGGER poison_orders BEFORE INSERT ON orders
WHEN NEW.client_order_id LIKE 'poison-%'
BEGIN SELECT RAISE(ABORT, 'poisoned order'); END
"""
_POISON_POSTGRES = (
    """
CREATE FUNCTION poison_orders() RETURNS trigger AS $$
BEGIN
  IF NEW.client_order_id LIKE 'poison-%' THEN RAISE EXCEPTION 'poisoned order'; END IF;
  RETURN NEW;
END $$ LANGUAGE plpgsql
""",
    "CREATE TRIGGER poison_orders BEFORE INSERT ON orders "
    "FOR EACH ROW EXECUTE FUNCTION poison_orders()",
)


async def test_an_order_the_database_refuses_fails_alone(isolated_settings: Settings) -> None:
    async with running_app(isolated_settings) as app:
        db = app.state.ctx.db
        # A real fault inside the database: a trigger that aborts one order's INSERT.
        async with db.engine.begin() as conn:
            for statement in (_POISON_SQLITE,) if db.is_sqlite else _POISON_POSTGRES:
                await conn.exec_driver_sql(statement)
        user = await sign_up(app)
        await set_price(app, "BTCUSDT", "50000")
        pid = (await user.portfolio(initial_balance="100000"))["id"]
        key = await user.api_key("write")
        bodies = [_market(pid, "0.01") for _ in range(15)]
        bodies[7] = _market(pid, "0.01", client_order_id="poison-1")
        # As a real server does, answer the failure with a 500 rather than raise it to the client.
        transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
        async with httpx.AsyncClient(transport=transport, base_url=ORIGIN) as client:
            responses = await asyncio.gather(
                *(client.post("/v1/order", json=body, headers=bearer(key)) for body in bodies)
            )
        statuses = Counter(r.status_code for r in responses)
        assert statuses == {201: 14, 500: 1}, [r.text for r in responses]
        assert responses[7].json() == {
            "error": "internal_error",
            "msg": "Something went wrong on our side; it was logged.",
        }
        assert (await positions(user, pid))["BTCUSDT"]["quantity"] == 0.14
        async with db.reader() as session:
            stored = await session.scalar(
                select(func.count()).select_from(Order).where(Order.portfolio_id == pid)
            )
        assert stored == 14
        account = await equity(user, pid)
        assert account["balance"] == account["ledger_balance"]
        await user.client.aclose()


def test_an_order_record_carries_every_column_of_the_orders_table() -> None:
    assert set(COLUMNS) == {column.name for column in Order.__table__.columns}
