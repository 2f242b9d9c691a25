"""LIMIT orders, the matching engine, restart, cancel races (trading core points 5, 6, 8)."""

import asyncio
import contextlib
from collections.abc import AsyncIterator
from decimal import Decimal

import pytest
from fastapi import FastAPI
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from papertrade.config import Settings
from papertrade.engine import engine as engine_module
from papertrade.models import Order
from papertrade.orders.events import OrderAccepted
from papertrade.orders.views import order_event_data
from tests.conditional.helpers import conditional, wait_for_conditional
from tests.conftest import User, client_for, running_app, sign_up
from tests.trading_api.helpers import (
    equity,
    limit,
    market,
    order,
    positions,
    set_price,
    wait_for_status,
)


async def test_limit_rests_is_listed_and_cancels(user: User, app: FastAPI) -> None:
    await set_price(app, "BTCUSDT", "60000")
    pid = (await user.portfolio())["id"]
    resting = await limit(user, pid, "buy", "0.01", "55000")
    assert resting["status"] == "new" and resting["filled_quantity"] == 0
    listed = (await user.get("/v1/order", params={"portfolio_id": pid, "status": "open"})).json()
    assert [o["id"] for o in listed["orders"]] == [resting["id"]]
    assert (await equity(user, pid))["margin_used"] == 27.5  # 550 / 20 reserved
    canceled = await user.delete(f"/v1/order/{resting['id']}")
    assert canceled.status_code == 200 and canceled.json()["status"] == "canceled"
    assert (await equity(user, pid))["margin_used"] == 0
    again = await user.delete(f"/v1/order/{resting['id']}")
    assert again.status_code == 409 and again.json()["error"] == "order_not_open"
    await set_price(app, "BTCUSDT", "50000")
    assert (await user.get(f"/v1/order/{resting['id']}")).json()["status"] == "canceled"
    assert await positions(user, pid) == {}


async def test_limit_fills_at_its_price_as_maker_when_the_mark_crosses(
    user: User, app: FastAPI
) -> None:
    await set_price(app, "ETHUSDT", "3000")
    pid = (await user.portfolio())["id"]
    buy = await order(
        user,
        portfolio_id=pid,
        symbol="ETHUSDT",
        side="buy",
        type="limit",
        quantity="1",
        price="2900",
    )
    sell = await order(
        user,
        portfolio_id=pid,
        symbol="ETHUSDT",
        side="sell",
        type="limit",
        quantity="1",
        price="3200",
    )
    await set_price(app, "ETHUSDT", "2950")
    assert (await user.get(f"/v1/order/{buy['id']}")).json()["status"] == "new"
    await set_price(app, "ETHUSDT", "2899.5")
    filled = await wait_for_status(user, buy["id"], "filled")
    assert filled["avg_price"] == 2900 and filled["commission"] == 0.58  # 2900 × 0.02 %
    await set_price(app, "ETHUSDT", "3300")
    sold = await wait_for_status(user, sell["id"], "filled")
    assert sold["avg_price"] == 3200 and sold["realized_pnl"] == 300
    assert await positions(user, pid) == {}
    fills = (await user.get(f"/v1/portfolios/{pid}/fills")).json()
    assert [f["liquidity"] for f in fills] == ["maker", "maker"]


async def test_marketable_limit_fills_at_once_as_taker(user: User, app: FastAPI) -> None:
    await set_price(app, "BTCUSDT", "60000")
    pid = (await user.portfolio())["id"]
    taken = await limit(user, pid, "buy", "0.01", "61000")
    assert taken["status"] == "filled" and taken["avg_price"] == 60000
    assert taken["commission"] == 0.3


async def test_post_only_ioc_and_fok(user: User, app: FastAPI) -> None:
    await set_price(app, "BTCUSDT", "60000")
    pid = (await user.portfolio())["id"]
    base = {
        "portfolio_id": pid,
        "symbol": "BTCUSDT",
        "side": "buy",
        "type": "limit",
        "quantity": "0.01",
    }
    gtx = await user.post("/v1/order", json={**base, "price": "60100", "time_in_force": "GTX"})
    assert gtx.status_code == 400 and gtx.json()["error"] == "post_only_would_take"
    fok = await user.post("/v1/order", json={**base, "price": "59000", "time_in_force": "FOK"})
    assert fok.status_code == 400 and fok.json()["error"] == "fok_not_fillable"
    ioc = await order(user, **{**base, "price": "59000", "time_in_force": "IOC"})
    assert ioc["status"] == "expired"
    assert (await user.get("/v1/order", params={"portfolio_id": pid, "status": "open"})).json()[
        "orders"
    ] == []


async def test_resting_close_order_is_capped_when_the_position_shrank(
    user: User, app: FastAPI
) -> None:
    await set_price(app, "SOLUSDT", "150")
    pid = (await user.portfolio())["id"]
    await market(user, pid, "SOLUSDT", "buy", "10")
    take_profit = await order(
        user,
        portfolio_id=pid,
        symbol="SOLUSDT",
        action="close",
        type="limit",
        quantity="10",
        price="160",
    )
    assert take_profit["side"] == "sell"
    await order(
        user, portfolio_id=pid, symbol="SOLUSDT", action="close", type="market", quantity="6"
    )
    await set_price(app, "SOLUSDT", "161")
    done = await wait_for_status(user, take_profit["id"], "expired")
    assert done["filled_quantity"] == 4
    assert await positions(user, pid) == {}


async def test_resting_orders_survive_a_restart_and_fill_after(
    isolated_settings: Settings,
) -> None:
    settings = isolated_settings
    async with running_app(settings) as first:
        user = await sign_up(first)
        await set_price(first, "BTCUSDT", "60000")
        pid = (await user.portfolio())["id"]
        resting = await limit(user, pid, "buy", "0.01", "58000")
        await user.client.aclose()
    async with running_app(settings) as second:
        assert resting["id"] in second.state.engine.books["BTCUSDT"]
        async with client_for(second) as client:
            await client.post(
                "/v1/auth/login", json={"email": user.email, "password": user.password}
            )
            again = User(client, user.email, user.password, user.profile)
            await set_price(second, "BTCUSDT", "57000")
            filled = await wait_for_status(again, resting["id"], "filled")
    assert filled["avg_price"] == 58000


async def test_cancel_racing_a_fill_has_exactly_one_outcome(user: User, app: FastAPI) -> None:
    import asyncio

    await set_price(app, "XRPUSDT", "0.6")
    pid = (await user.portfolio())["id"]
    ids = [
        (
            await order(
                user,
                portfolio_id=pid,
                symbol="XRPUSDT",
                side="buy",
                type="limit",
                quantity="100",
                price="0.5",
            )
        )["id"]
        for _ in range(10)
    ]
    cancels = [user.delete(f"/v1/order/{i}") for i in ids]
    _, responses = await asyncio.gather(set_price(app, "XRPUSDT", "0.49"), asyncio.gather(*cancels))
    final = [(await user.get(f"/v1/order/{i}")).json() for i in ids]
    for response, state in zip(responses, final, strict=True):
        assert state["status"] in {"canceled", "filled"}
        if response.status_code == 200:
            assert state["status"] == "canceled" and state["filled_quantity"] == 0
        else:
            assert response.json()["error"] == "order_not_open" and state["status"] == "filled"
    fills = (await user.get(f"/v1/portfolios/{pid}/fills")).json()
    filled_ids = [f["order_id"] for f in fills]
    assert len(filled_ids) == len(set(filled_ids))
    assert sorted(filled_ids) == sorted(s["id"] for s in final if s["status"] == "filled")
    held = (await positions(user, pid)).get("XRPUSDT")
    assert Decimal(str(held["quantity"] if held else 0)) == 100 * len(filled_ids)


async def test_order_listing_pages_newest_first(user: User, app: FastAPI) -> None:
    await set_price(app, "BTCUSDT", "60000")
    pid = (await user.portfolio())["id"]
    ids = [(await limit(user, pid, "buy", "0.01", str(50000 + i)))["id"] for i in range(5)]
    first = (await user.get("/v1/order", params={"portfolio_id": pid, "limit": 3})).json()
    assert [o["id"] for o in first["orders"]] == ids[::-1][:3]
    second = (
        await user.get(
            "/v1/order",
            params={"portfolio_id": pid, "limit": 3, "before_id": first["next_before_id"]},
        )
    ).json()
    assert [o["id"] for o in second["orders"]] == ids[::-1][3:]
    assert second["next_before_id"] is None


async def test_an_order_filled_while_open_orders_are_read_is_not_put_back(
    user: User, app: FastAPI
) -> None:
    """The follower re-reads open orders (to pick up other processes' orders). A read that began
    before a fill committed still shows the order open; it must not return to the book, where it
    would be a ghost the book keeps crossing."""
    ctx = app.state.ctx
    await set_price(app, "BTCUSDT", "60000")
    pid = (await user.portfolio())["id"]
    resting = await limit(user, pid, "buy", "0.01", "55000")
    book = app.state.engine.books.book("BTCUSDT")
    assert resting["id"] in book
    async with contextlib.AsyncExitStack() as hold:  # the fill cannot commit while this lasts
        if ctx.db.is_sqlite:
            await hold.enter_async_context(ctx.db.write_lock)
        else:
            session = await hold.enter_async_context(ctx.db.sessions())
            await hold.enter_async_context(session.begin())
            await session.execute(
                select(Order.id).where(Order.id == resting["id"]).with_for_update()
            )
        tick = asyncio.create_task(set_price(app, "BTCUSDT", "54000"))
        while resting["id"] in app.state.engine.books.book("BTCUSDT"):  # noqa: ASYNC110 (crossed)
            await asyncio.sleep(0.01)
        assert (await user.get(f"/v1/order/{resting['id']}")).json()["status"] == "new"
        await app.state.engine.pick_up_open_orders(full=False)
        assert resting["id"] not in app.state.engine.books.book("BTCUSDT")
    await tick
    filled = await wait_for_status(user, resting["id"], "filled")
    assert filled["avg_price"] == 55000
    await app.state.engine.pick_up_open_orders(full=True)
    assert resting["id"] not in app.state.engine.books.book("BTCUSDT")


async def test_what_is_placed_while_a_full_pass_reads_stays_watched(
    user: User, app: FastAPI, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The follower's full pass drops from the books what its read found closed. An order (and a
    conditional order) placed after that read began is missing from it but open: it must stay in
    the book, or a restart-free engine would not fill it until a later pass put it back."""
    ctx, engine = app.state.ctx, app.state.engine
    await set_price(app, "BTCUSDT", "60000")
    pid = (await user.portfolio())["id"]
    placed: dict[str, int] = {}

    async def place_limit() -> None:
        placed["order"] = (await limit(user, pid, "buy", "0.01", "55000"))["id"]

    async def place_stop() -> None:
        stop = await conditional(
            user,
            portfolio_id=pid,
            symbol="BTCUSDT",
            side="buy",
            type="stop_market",
            trigger_price="65000",
            quantity="0.01",
        )
        placed["stop"] = stop["id"]

    after_reads = [place_limit, place_stop]  # after the open orders' read, then the conditionals'
    reads, passing = ctx.db.reader, asyncio.current_task()

    @contextlib.asynccontextmanager
    async def reader() -> AsyncIterator[AsyncSession]:
        async with reads() as session:
            yield session
        if after_reads and asyncio.current_task() is passing:
            step = after_reads.pop(0)
            with monkeypatch.context() as inner:
                inner.setattr(ctx.db, "reader", reads)  # the placement reads as usual
                await step()

    monkeypatch.setattr(ctx.db, "reader", reader)
    await engine.pick_up_open_orders(full=True)
    monkeypatch.setattr(ctx.db, "reader", reads)
    assert not after_reads  # both were placed while the pass read
    assert placed["order"] in engine.books.book("BTCUSDT")
    assert placed["stop"] in engine.triggers
    await set_price(app, "BTCUSDT", "65500")  # and the stop still fires
    fired = await wait_for_conditional(user, placed["stop"], "triggered")
    assert fired["actual_order_id"] is not None


async def test_the_engine_forgets_taken_out_orders_after_a_while(
    user: User, app: FastAPI, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the engine remembers of the orders it took out stays bounded: a long-running
    embedded service crosses and cancels orders all day."""
    monkeypatch.setattr(engine_module, "TAKEN_OUT_MEMORY_S", 0.2)
    engine = app.state.engine
    await set_price(app, "BTCUSDT", "60000")
    pid = (await user.portfolio())["id"]
    ids = []
    for _ in range(2):
        resting = await limit(user, pid, "buy", "0.01", "50000")
        ids.append(resting["id"])
    assert (await user.delete(f"/v1/order/{ids[0]}")).status_code == 200
    assert ids[0] in engine._taken_out
    await asyncio.sleep(0.3)
    assert (await user.delete(f"/v1/order/{ids[1]}")).status_code == 200
    assert ids[0] not in engine._taken_out and ids[1] in engine._taken_out


async def _resting_then_missed(user: User, app: FastAPI) -> tuple[int, Order]:
    """A resting sell at 63,000 that is not in its book when the mark reaches 63,000: the state
    of an order whose commit a tick overtook (on a busy machine, or placed by another process
    and not yet picked up)."""
    await set_price(app, "BTCUSDT", "60000")
    pid = (await user.portfolio())["id"]
    await market(user, pid, "BTCUSDT", "buy", "0.01")
    resting = await limit(user, pid, "sell", "0.01", "63000")
    engine = app.state.engine
    engine.books.remove("BTCUSDT", resting["id"])
    await set_price(app, "BTCUSDT", "63000")  # the tick finds no order to fill
    if app.state.ctx.db.is_sqlite:  # (on PostgreSQL the engine's follow pass may be quicker)
        await asyncio.sleep(0.2)
        assert (await user.get(f"/v1/order/{resting['id']}")).json()["status"] == "new"
    async with app.state.ctx.db.reader() as session:
        row = await session.get(Order, resting["id"])
        assert row is not None
    return resting["id"], row


async def test_a_tick_that_overtook_an_orders_commit_still_fills_it(
    user: User, app: FastAPI
) -> None:
    """The engine learns of a new resting order after its commit; a tick in between was checked
    before the order was in the book. The latest mark is applied again as the order joins."""
    order_id, row = await _resting_then_missed(user, app)
    joined = OrderAccepted(portfolio_id=row.portfolio_id, order=order_event_data(row), resting=True)
    await app.state.engine.on_events([joined])
    filled = await wait_for_status(user, order_id, "filled")
    assert filled["avg_price"] == 63000


async def test_an_order_the_follow_pass_rested_first_joins_its_book_once(
    user: User, app: FastAPI
) -> None:
    """On PostgreSQL the engine's follow pass reads new orders from the database, and may rest one
    before its commit's event arrives: the event then adds nothing (it raised, and the rest of
    the commit's events were lost to the engine), and the order fills once."""
    await set_price(app, "BTCUSDT", "60000")
    pid = (await user.portfolio())["id"]
    await market(user, pid, "BTCUSDT", "buy", "0.01")
    resting = await limit(user, pid, "sell", "0.01", "63000")
    async with app.state.ctx.db.reader() as session:
        row = await session.get(Order, resting["id"])
        assert row is not None
    engine = app.state.engine
    assert resting["id"] in engine.books.book("BTCUSDT")  # rested by its own event (or the pass)
    again = OrderAccepted(portfolio_id=pid, order=order_event_data(row), resting=True)
    await engine.on_events([again])  # as if the event came after the pass had rested it
    book = engine.books.book("BTCUSDT")
    assert [o.order_id for o in book.asks()].count(resting["id"]) == 1
    await set_price(app, "BTCUSDT", "63000")
    filled = await wait_for_status(user, resting["id"], "filled")
    assert (filled["filled_quantity"], filled["avg_price"]) == (0.01, 63000)


async def test_an_order_picked_up_from_the_database_after_the_tick_still_fills(
    user: User, app: FastAPI
) -> None:
    """Another process placed it; this engine picks it up a moment later, past the tick. On
    PostgreSQL the engine's own follow pass does that; SQLite has one process and no such pass,
    so it is called here."""
    order_id, _row = await _resting_then_missed(user, app)
    engine = app.state.engine
    if app.state.ctx.db.is_sqlite:
        joined: set[str] = set()
        await engine.pick_up_open_orders(full=False, joined=joined)
        assert joined == {"BTCUSDT"}
        await engine.catch_up(joined)
    filled = await wait_for_status(user, order_id, "filled")
    assert filled["avg_price"] == 63000
