"""Property-based checks over random order sequences and price paths (trading core, Done means)."""

from decimal import Decimal
from typing import Any

from fastapi import FastAPI
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import func, select

from papertrade.engine.engine import Engine
from papertrade.models import Fill, Order
from tests.conftest import User, sign_up
from tests.trading_api.helpers import positions, set_price

BASE = {"BTCUSDT": Decimal(60000), "ETHUSDT": Decimal(3000)}
QTY_STEP = {"BTCUSDT": Decimal("0.001"), "ETHUSDT": Decimal("0.01")}
TICK = {"BTCUSDT": Decimal("0.1"), "ETHUSDT": Decimal("0.01")}

symbols = st.sampled_from(sorted(BASE))
steps = st.one_of(
    st.tuples(st.just("market"), symbols, st.sampled_from(["buy", "sell"]), st.integers(2, 40)),
    st.tuples(
        st.just("limit"),
        symbols,
        st.sampled_from(["buy", "sell"]),
        st.integers(2, 40),
        st.integers(-30, 30),
    ),
    st.tuples(st.just("close"), symbols, st.integers(1, 40)),
    st.tuples(st.just("close_limit"), symbols, st.integers(1, 40), st.integers(-30, 30)),
    st.tuples(st.just("cancel"), st.integers(0, 20)),
    st.tuples(st.just("price"), symbols, st.integers(-60, 60)),
)


def _price(symbol: str, permille: int) -> Decimal:
    raw = BASE[symbol] * (1 + Decimal(permille) / 1000)
    return (raw / TICK[symbol]).to_integral_value() * TICK[symbol]


async def _check_books_rebuild(app: FastAPI) -> None:
    ctx = app.state.ctx
    async with ctx.db.reader() as session:
        open_ids = set(await session.scalars(select(Order.id).where(Order.is_open.is_(True))))
    rebuilt = Engine(ctx)  # what a restarted engine would load, without stealing the stream
    rebuilt.active = True
    await rebuilt.pick_up_open_orders(full=True)
    live = {
        o.order_id for book in app.state.engine.books.values() for o in [*book.bids(), *book.asks()]
    }
    again = {o.order_id for book in rebuilt.books.values() for o in [*book.bids(), *book.asks()]}
    assert live == open_ids == again  # a restart would lose nothing


async def _run(app: FastAPI, user: User, actions: list[tuple[Any, ...]]) -> None:
    pid = (await user.portfolio(initial_balance="20000"))["id"]
    marks = dict(BASE)
    for symbol, price in BASE.items():
        await set_price(app, symbol, str(price))
    placed: list[int] = []
    cancelled: set[int] = set()
    for action in actions:
        kind = action[0]
        before = await positions(user, pid)
        if kind == "price":
            marks[action[1]] = _price(action[1], action[2])
            await set_price(app, action[1], str(marks[action[1]]))
            continue
        if kind == "cancel":
            if placed:
                target = placed[action[1] % len(placed)]
                if (await user.delete(f"/v1/order/{target}")).status_code == 200:
                    cancelled.add(target)
            continue
        symbol = action[1]
        body: dict[str, Any] = {"portfolio_id": pid, "symbol": symbol}
        if kind in ("market", "limit"):
            body.update(side=action[2], quantity=str(action[3] * QTY_STEP[symbol]))
        else:
            body.update(action="close", quantity=str(action[2] * QTY_STEP[symbol]))
        if kind in ("limit", "close_limit"):
            body.update(type="limit", price=str(_price(symbol, action[-1])))
        else:
            body.update(type="market")
        response = await user.post("/v1/order", json=body)
        assert response.status_code in (201, 400), response.text
        if response.status_code != 201:
            continue
        placed.append(response.json()["id"])
        if kind == "close" and response.json()["status"] == "filled":
            after = await positions(user, pid)
            was = abs(Decimal(str(before[symbol]["quantity"]))) if symbol in before else Decimal(0)
            now = abs(Decimal(str(after[symbol]["quantity"]))) if symbol in after else Decimal(0)
            assert now < was  # close never increases exposure

    account = (await user.get(f"/v1/portfolios/{pid}/equity")).json()
    assert account["ledger_balance"] == account["balance"]
    held = await positions(user, pid)
    unrealized = sum(Decimal(str(p["unrealized_pnl"])) for p in held.values())
    assert abs(
        Decimal(str(account["equity"])) - (Decimal(str(account["ledger_balance"])) + unrealized)
    ) < Decimal("0.00001")
    ctx = app.state.ctx
    async with ctx.db.reader() as session:
        for order_id in placed:
            order = await session.get(Order, order_id)
            assert order is not None
            filled = await session.scalar(
                select(func.count(Fill.id)).where(Fill.order_id == order_id)
            )
            fills = list(await session.scalars(select(Fill).where(Fill.order_id == order_id)))
            assert sum((f.quantity for f in fills), Decimal(0)) == order.filled_quantity
            assert order.filled_quantity <= order.quantity  # no order fills twice
            if order_id in cancelled:
                assert filled == 0 and order.status == "canceled"  # a cancelled order never fills
    await _check_books_rebuild(app)


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(actions=st.lists(steps, min_size=1, max_size=18))
async def test_random_sequences_keep_the_books_straight(
    app: FastAPI, actions: list[tuple[Any, ...]]
) -> None:
    user = await sign_up(app)
    try:
        await _run(app, user, actions)
    finally:
        await user.client.aclose()
