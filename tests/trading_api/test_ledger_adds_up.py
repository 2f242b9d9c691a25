"""The ledger a user lists adds up to the balance they see, row by row (issue 14 item 5).

Every amount is booked at the 6 decimals the API shows, when it is written, and the balance moves
by exactly that amount: nothing is kept with more decimals than the ledger lists.
"""

from decimal import Decimal
from typing import Any

from fastapi import FastAPI
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import User, sign_up
from tests.trading_api.helpers import market, set_price

BASE = {"BTCUSDT": Decimal(60000), "ETHUSDT": Decimal(3000)}
QTY_STEP = {"BTCUSDT": Decimal("0.001"), "ETHUSDT": Decimal("0.01")}
TICK = {"BTCUSDT": Decimal("0.1"), "ETHUSDT": Decimal("0.01")}
MICRO = Decimal("0.000001")


def _number(value: Any) -> Decimal:
    return Decimal(str(value))  # a JSON number the API sent, as the decimal it wrote


async def _listed_ledger(user: User, pid: int) -> tuple[list[dict[str, Any]], Decimal]:
    """The whole ledger, oldest first, and the balance, read while nothing moved in between."""
    while True:
        first = (await user.get(f"/v1/portfolios/{pid}/ledger", params={"limit": 1000})).json()
        balance = _number((await user.get(f"/v1/portfolios/{pid}")).json()["balance"])
        again = (await user.get(f"/v1/portfolios/{pid}/ledger", params={"limit": 1000})).json()
        if first == again:  # a resting order the engine filled meanwhile: read again
            return list(reversed(first)), balance


async def _assert_adds_up(user: User, pid: int) -> None:
    rows, balance = await _listed_ledger(user, pid)
    amounts = [_number(row["amount"]) for row in rows]
    assert sum(amounts, Decimal(0)) == balance
    running = Decimal(0)
    for row, amount in zip(rows, amounts, strict=True):
        running += amount
        assert _number(row["balance_after"]) == running, row
    assert running == balance


async def test_five_small_fees_add_up_to_the_balance(user: User, app: FastAPI) -> None:
    # 0.05 ETH at 3001.37 pays 0.075034250 USDT in fees: more decimals than the ledger shows.
    await set_price(app, "ETHUSDT", "3001.37")
    pid = (await user.portfolio())["id"]
    for _ in range(5):
        await market(user, pid, "ETHUSDT", "buy", "0.05")
    rows, balance = await _listed_ledger(user, pid)
    fees = [_number(row["amount"]) for row in rows if row["kind"] == "commission"]
    assert fees == [Decimal("-0.075034")] * 5
    assert balance == Decimal("10000") + sum(fees, Decimal(0)) == Decimal("9999.62483")
    fills = (await user.get(f"/v1/portfolios/{pid}/fills")).json()
    assert {_number(f["commission"]) for f in fills} == {Decimal("0.075034")}
    await _assert_adds_up(user, pid)


symbols = st.sampled_from(sorted(BASE))
ticks = st.integers(-4000, 4000)  # prices off round numbers, so fees run past 6 decimals
lots = st.integers(3, 97)  # steps of quantity: 180 to 5820 USDT of BTC, 90 to 2910 of ETH
steps = st.one_of(
    st.tuples(st.just("market"), symbols, st.sampled_from(["buy", "sell"]), lots),
    st.tuples(st.just("limit"), symbols, st.sampled_from(["buy", "sell"]), lots, ticks),
    st.tuples(st.just("close"), symbols, lots),
    st.tuples(st.just("top_up"), st.integers(1, 5_000_000_000)),
    st.tuples(st.just("price"), symbols, ticks),
)


def _price(symbol: str, offset: int) -> str:
    return str(BASE[symbol] + offset * TICK[symbol])


async def _run(app: FastAPI, user: User, initial: int, actions: list[tuple[Any, ...]]) -> None:
    for symbol, price in BASE.items():
        await set_price(app, symbol, str(price))
    pid = (await user.portfolio(initial_balance=str(initial * MICRO)))["id"]
    for action in actions:
        kind = action[0]
        if kind == "price":
            await set_price(app, action[1], _price(action[1], action[2]))  # may fill resting limits
            continue
        if kind == "top_up":
            body = {"amount": str(action[1] * MICRO)}
            response = await user.post(f"/v1/portfolios/{pid}/top-up", json=body)
            assert response.status_code == 200, response.text
            continue
        symbol = action[1]
        order: dict[str, Any] = {"portfolio_id": pid, "symbol": symbol, "type": "market"}
        if kind == "close":
            order.update(action="close", quantity=str(action[2] * QTY_STEP[symbol]))
        else:
            order.update(side=action[2], quantity=str(action[3] * QTY_STEP[symbol]))
        if kind == "limit":
            order.update(type="limit", price=_price(symbol, action[4]))
        response = await user.post("/v1/order", json=order)
        assert response.status_code in (201, 400), response.text  # 400: no position to close …
    await _assert_adds_up(user, pid)


@settings(
    max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    initial=st.integers(1_000_000_000, 50_000_000_000),
    actions=st.lists(steps, min_size=1, max_size=14),
)
async def test_random_sequences_list_a_ledger_that_adds_up(
    app: FastAPI, initial: int, actions: list[tuple[Any, ...]]
) -> None:
    user = await sign_up(app)
    try:
        await _run(app, user, initial, actions)
    finally:
        await user.client.aclose()
