"""Numbers in and out of /v1 (issue 14 items 9 and 10).

In: a number is a JSON number or a plain ASCII decimal string; whatever Python would stretch to
read ("1_000", " 5 ", "５", "١٢", true) is refused, not booked. Out: never exponent form, USDT
amounts at 6 decimals and prices at the instrument's tick, in JSON and in messages.
"""

import asyncio
import re
from decimal import Decimal
from typing import Any

import pytest
from fastapi import FastAPI

from papertrade.trading import margin
from tests.conftest import User
from tests.trading_api.helpers import market, positions, set_price
from tests.ws.helpers import socket

EXPONENT = re.compile(r"[0-9][eE][-+]?[0-9]")

LOOSE = ["1_000", " 5 ", "5 ", "５", "١٢", "1e3", "+5", ".5", "0x10", True, False]


def _refused(response: Any, field: str) -> None:
    assert response.status_code == 422, response.text
    assert response.json()["error"] == "validation_error"
    assert response.json()["msg"].startswith(f"{field}: "), response.text


@pytest.mark.parametrize("amount", LOOSE)
async def test_loose_amounts_are_refused_and_nothing_is_booked(user: User, amount: Any) -> None:
    pid = (await user.portfolio())["id"]
    _refused(await user.post(f"/v1/portfolios/{pid}/top-up", json={"amount": amount}), "amount")
    reset = await user.post(f"/v1/portfolios/{pid}/reset", json={"initial_balance": amount})
    _refused(reset, "initial_balance")
    created = await user.post("/v1/portfolios", json={"name": "x", "initial_balance": amount})
    _refused(created, "initial_balance")
    ledger = (await user.get(f"/v1/portfolios/{pid}/ledger")).json()
    assert [(row["kind"], row["amount"]) for row in ledger] == [("deposit", 10000)]
    assert len((await user.get("/v1/portfolios/my")).json()) == 1


async def test_plain_numbers_are_booked(user: User) -> None:
    pid = (await user.portfolio(initial_balance="1000.5"))["id"]
    for amount in ("1000", "0.000001", 250, 0.25, "12.50"):
        response = await user.post(f"/v1/portfolios/{pid}/top-up", json={"amount": amount})
        assert response.status_code == 200, response.text
    assert (await user.get(f"/v1/portfolios/{pid}")).json()["balance"] == 2263.250001


async def test_orders_and_leverage_take_plain_numbers_only(user: User, app: FastAPI) -> None:
    await set_price(app, "BTCUSDT", "60000")
    pid = (await user.portfolio())["id"]
    base = {"portfolio_id": pid, "symbol": "BTCUSDT", "side": "buy", "type": "limit"}
    cases = [
        (base | {"quantity": "０.０１", "price": "50000"}, "quantity"),
        (base | {"quantity": "0.01", "price": " 50000 "}, "price"),
        (base | {"quantity": "0.01", "price": "50_000"}, "price"),
        (base | {"type": "market", "size_usd": "١٠٠٠"}, "size_usd"),
        (base | {"quantity": "0.01", "price": "50000", "portfolio_id": True}, "portfolio_id"),
    ]
    for body, field in cases:
        _refused(await user.post("/v1/order", json=body), field)
    leverage = f"/v1/portfolios/{pid}/leverage"
    for value in (True, "１０", " 10"):
        _refused(
            await user.post(leverage, json={"symbol": "BTCUSDT", "leverage": value}), "leverage"
        )
    assert (await user.post(leverage, json={"symbol": "BTCUSDT", "leverage": "10"})).json()[
        "leverage"
    ] == 10
    listed = await user.get("/v1/order", params={"portfolio_id": pid})
    assert listed.json()["orders"] == []


async def test_no_number_is_written_in_exponent_form(
    user: User, app: FastAPI, live_url: str
) -> None:
    symbols = await user.get("/v1/market/symbols")
    assert '"tick_size":0.0000001,' in symbols.text  # 1000PEPEUSDT; once written as 1e-7
    await set_price(app, "1000PEPEUSDT", "0.0000123")
    quotes = await user.get("/v1/market/quotes", params={"symbol": "1000PEPEUSDT"})
    assert '"mark_price":0.0000123,' in quotes.text
    pid = (await user.portfolio())["id"]
    await market(user, pid, "1000PEPEUSDT", "buy", "9000000")
    held = await user.get(f"/v1/portfolios/{pid}/positions")
    assert '"entry_price":0.0000123,' in held.text
    for response in (symbols, quotes, held):
        assert not EXPONENT.search(response.text), response.text
    async with socket(live_url, await user.api_key()) as ws:
        await ws.subscribe("mark_price:1000PEPEUSDT")
        await set_price(app, "1000PEPEUSDT", "0.0000124")
        # A tick of the old price may still be on its way (the simulation ticks by itself): every
        # message is plain, and the new price comes.
        async with asyncio.timeout(5):
            while True:
                raw = str(await ws.conn.recv())
                assert not EXPONENT.search(raw), raw
                if '"mark_price":0.0000124,' in raw:
                    break
                assert '"mark_price":0.0000123,' in raw, raw


async def test_messages_show_money_at_6_decimals_and_numbers_plainly(
    user: User, app: FastAPI
) -> None:
    await set_price(app, "BTCUSDT", "60000.1")
    pid = (await user.portfolio())["id"]
    body = {"portfolio_id": pid, "symbol": "BTCUSDT", "side": "buy", "type": "market"}
    too_big = await user.post("/v1/order", json=body | {"quantity": "4.207"})
    assert too_big.json() == {
        "error": "insufficient_margin",
        # 252420.4207 / 20 + the 0.05 % taker fee = 12747.23124535, against the 10000 deposited
        "msg": "Margin required 12747.231245 exceeds available 10000.",
    }
    tiny = await user.post("/v1/order", json=body | {"quantity": "0.0000001"})
    assert tiny.json()["msg"] == "Quantity 0.0000001 is not a multiple of 0.001."
    small = await user.post("/v1/order", json=body | {"quantity": "0.001"})
    assert small.json()["msg"] == "Buy notional 60.0001 is below minimum 100."


@pytest.mark.parametrize("side", ["buy", "sell"])
async def test_liquidation_price_is_on_the_tick_toward_the_mark(
    user: User, app: FastAPI, side: str
) -> None:
    await set_price(app, "ETHUSDT", "3001.37")
    pid = (await user.portfolio(initial_balance="700"))["id"]
    await market(user, pid, "ETHUSDT", side, "3.331")
    shown = Decimal(str((await positions(user, pid))["ETHUSDT"]["liquidation_price"]))
    balance = Decimal(str((await user.get(f"/v1/portfolios/{pid}")).json()["balance"]))
    eth = app.state.ctx.market.instruments()["ETHUSDT"]
    qty = Decimal("3.331") if side == "buy" else Decimal("-3.331")
    exact = margin.liquidation_price(eth, qty, Decimal("3001.37"), balance)
    assert exact is not None and exact != exact.quantize(Decimal("0.01"))
    assert shown == shown.quantize(Decimal("0.01"))  # on the 0.01 tick of ETHUSDT
    # A long is liquidated when the mark falls to the price, a short when it rises to it: the
    # price shown is the next tick on the mark's side, reached before the exact one.
    if side == "buy":
        assert exact < shown < exact + Decimal("0.01") and shown < 3001.37
    else:
        assert exact - Decimal("0.01") < shown < exact and shown > 3001.37
