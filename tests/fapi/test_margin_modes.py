"""Isolated margin and hedge mode through /fapi with the real clients (ccxt, python-binance) over
HTTP, and the engine's isolated liquidation: an isolated position lives on its own margin."""

import asyncio
import warnings
from decimal import Decimal
from typing import Any

import pytest
from ccxt.base import errors
from fastapi import FastAPI

from papertrade.engine import risk
from tests.conftest import User
from tests.fapi.clients import ccxt_usdm
from tests.fapi.helpers import Bot
from tests.trading_api.helpers import equity, set_price, until_liquidated

with warnings.catch_warnings():  # python-binance imports deprecated websockets APIs
    warnings.simplefilter("ignore")
    from binance.client import Client  # type: ignore[import-untyped]
    from binance.exceptions import BinanceAPIException  # type: ignore[import-untyped]

SYMBOL = "BTC/USDT:USDT"


async def _ccxt(user: User, live_url: str) -> tuple[Any, int]:
    portfolio = await user.portfolio()
    api_key, api_secret = await user.compat_key(portfolio["id"])
    return ccxt_usdm(live_url, api_key, api_secret), portfolio["id"]


async def _ledger_adds_up(user: User, pid: int) -> dict[str, Any]:
    account = await equity(user, pid)
    assert account["ledger_balance"] == account["balance"]
    rows = (await user.get(f"/v1/portfolios/{pid}/ledger", params={"limit": 1000})).json()
    assert sum(Decimal(str(r["amount"])) for r in rows) == Decimal(str(account["balance"]))
    return account


async def _until(check: Any, within: float = 30) -> Any:
    deadline = asyncio.get_running_loop().time() + within
    while True:
        value = await check()
        if value:
            return value
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.05)


async def test_freqtrade_isolated_sequence_with_its_stop_on_the_exchange(
    app: FastAPI, user: User, live_url: str
) -> None:
    """freqtrade live on Binance futures with `margin_mode: isolated` and
    `stoploss_on_exchange: true`, call for call through ccxt (contract §7): position mode and
    multi-assets checks, marginType ISOLATED, leverage, a MARKET entry, a STOP_MARKET reduce-only
    stop on the Algo API polled with {"stop": True}; the stop fires and the margin comes back."""
    await set_price(app, "BTCUSDT", "60000")
    exchange, pid = await _ccxt(user, live_url)
    try:
        await exchange.load_markets()
        assert (await exchange.fetch_position_mode(SYMBOL))["hedged"] is False
        await exchange.set_margin_mode("isolated", SYMBOL)
        with pytest.raises(errors.MarginModeAlreadySet):  # freqtrade accepts -4046
            await exchange.set_margin_mode("isolated", SYMBOL)
        await exchange.set_leverage(10, SYMBOL)
        bought = await exchange.create_order(SYMBOL, "market", "buy", 0.01)
        assert bought["status"] == "closed" and bought["average"] == 60000

        (held,) = await exchange.fetch_positions([SYMBOL])
        assert held["marginMode"] == "isolated" and held["side"] == "long"
        assert held["info"]["isolatedWallet"] == "60.00000000"  # 600 notional at 10x
        # Isolated: only its own 60 USDT carries it, liquidated at 54216.87 (rounded up a tick).
        assert held["liquidationPrice"] == 54216.9
        balance = await exchange.fetch_balance()
        # The wallet still counts the isolated margin; 0.30 USDT of fee paid.
        assert balance["USDT"]["total"] == 9999.7
        assert balance["info"]["totalCrossWalletBalance"] == "9939.70000000"

        stop = await exchange.create_order(
            SYMBOL, "stop_market", "sell", 0.01, None, {"stopPrice": 58000, "reduceOnly": True}
        )
        polled = await exchange.fetch_order(stop["id"], SYMBOL, {"stop": True})
        assert polled["status"] == "open"
        await set_price(app, "BTCUSDT", "57500")

        async def closed() -> Any:
            got = await exchange.fetch_order(stop["id"], SYMBOL, {"stop": True})
            return got if got["status"] == "closed" else None

        done = await _until(closed)
        sold = await exchange.fetch_order(done["info"]["actualOrderId"], SYMBOL)
        assert (sold["status"], sold["filled"], sold["average"]) == ("closed", 0.01, 57500)
        assert await exchange.fetch_positions([SYMBOL]) == []
        # Loss 25, fees 0.30 + 0.2875; the 60 of margin came back through the ledger.
        account = await _ledger_adds_up(user, pid)
        assert account["balance"] == 9974.4125 and account["isolated_margin"] == 0
        kinds = [r["kind"] for r in (await user.get(f"/v1/portfolios/{pid}/ledger")).json()]
        assert kinds.count("isolated_margin") == 2
    finally:
        await exchange.close()


async def test_ccxt_adds_and_reduces_isolated_margin(
    app: FastAPI, user: User, live_url: str
) -> None:
    await set_price(app, "BTCUSDT", "60000")
    exchange, pid = await _ccxt(user, live_url)
    try:
        await exchange.load_markets()
        with pytest.raises(errors.BadRequest, match="-4049"):  # nothing isolated to add to
            await exchange.add_margin(SYMBOL, 10)
        await exchange.set_margin_mode("isolated", SYMBOL)
        await exchange.set_leverage(10, SYMBOL)
        await exchange.create_order(SYMBOL, "market", "buy", 0.01)
        with pytest.raises(errors.OperationRejected, match="-4048"):
            await exchange.set_margin_mode("cross", SYMBOL)

        added = await exchange.add_margin(SYMBOL, 40)
        assert added["type"] == "add" and added["amount"] == 40
        (held,) = await exchange.fetch_positions([SYMBOL])
        assert held["info"]["isolatedWallet"] == "100.00000000"
        assert held["liquidationPrice"] > 0 and held["liquidationPrice"] < 54216.9  # further away
        # 100 held, 60 needed at the mark: at most 40 can come back.
        with pytest.raises(errors.InsufficientFunds, match="-4051"):
            await exchange.reduce_margin(SYMBOL, 40.01)
        reduced = await exchange.reduce_margin(SYMBOL, 15)
        assert reduced["type"] == "reduce" and reduced["amount"] == 15
        with pytest.raises(errors.InsufficientFunds, match="-4050"):
            await exchange.add_margin(SYMBOL, 1_000_000)
        history = await exchange.fetch_margin_adjustment_history(SYMBOL)
        assert [(h["type"], h["amount"]) for h in history] == [("add", 40), ("reduce", 15)]

        account = await _ledger_adds_up(user, pid)
        assert account["isolated_margin"] == 85 and account["balance"] == 9914.7
        assert account["equity"] == 9999.7  # the margin moved, the equity did not
    finally:
        await exchange.close()


async def test_isolated_liquidation_takes_only_its_own_margin(
    app: FastAPI, user: User, bot: Bot
) -> None:
    """A gap through the isolated position's liquidation price: the position is closed, it loses
    its 60 USDT of margin and no more; the cross ETH position and the balance are untouched."""
    await set_price(app, "BTCUSDT", "60000")
    await set_price(app, "ETHUSDT", "3000")
    pid = bot.portfolio_id
    await bot.ok("POST", "/v1/marginType", {"symbol": "BTCUSDT", "marginType": "ISOLATED"})
    await bot.ok("POST", "/v1/leverage", {"symbol": "BTCUSDT", "leverage": 10})
    for symbol, qty in (("BTCUSDT", "0.01"), ("ETHUSDT", "0.1")):
        params = {"symbol": symbol, "side": "BUY", "type": "MARKET", "quantity": qty}
        await bot.ok("POST", "/v1/order", params)
    before = await _ledger_adds_up(user, pid)
    assert before["balance"] == 9939.55 and before["isolated_margin"] == 60

    await set_price(app, "BTCUSDT", "50000")  # the loss would be 100 on 60 of margin
    await until_liquidated(app, pid)
    risk_rows = {r["symbol"]: r for r in await bot.ok("GET", "/v3/positionRisk")}
    assert set(risk_rows) == {"ETHUSDT"}  # the cross position is still open
    assert risk_rows["ETHUSDT"]["positionAmt"] == "0.100"
    fills = (await user.get(f"/v1/portfolios/{pid}/fills")).json()
    assert fills[0]["is_liquidation"] is True and fills[0]["realized_pnl"] == -60
    after = await _ledger_adds_up(user, pid)
    # 9939.55 + 60 back − 60 lost − 0.25 fee: the rest of the balance paid nothing of the gap.
    assert after["balance"] == 9939.3 and after["isolated_margin"] == 0
    assert pid not in await risk.liquidate_underwater(app.state.ctx)


async def test_cross_liquidation_leaves_isolated_positions_alone(
    app: FastAPI, user: User, fapi_client: Any
) -> None:
    from tests.fapi.helpers import make_bot

    bot = await make_bot(user, fapi_client, initial_balance="500")
    await set_price(app, "BTCUSDT", "60000")
    await set_price(app, "ETHUSDT", "3000")
    await bot.ok("POST", "/v1/marginType", {"symbol": "ETHUSDT", "marginType": "ISOLATED"})
    await bot.ok("POST", "/v1/leverage", {"symbol": "ETHUSDT", "leverage": 5})
    await bot.ok("POST", "/v1/leverage", {"symbol": "BTCUSDT", "leverage": 50})
    eth = {"symbol": "ETHUSDT", "side": "BUY", "type": "MARKET", "quantity": "0.1"}
    await bot.ok("POST", "/v1/order", eth)  # 60 of isolated margin
    btc = {"symbol": "BTCUSDT", "side": "BUY", "type": "MARKET", "quantity": "0.3"}
    await bot.ok("POST", "/v1/order", btc)
    (cross,) = [r for r in await bot.ok("GET", "/v3/positionRisk") if r["symbol"] == "BTCUSDT"]
    await set_price(app, "BTCUSDT", str(int(Decimal(cross["liquidationPrice"])) - 50))
    await until_liquidated(app, bot.portfolio_id)
    left = {r["symbol"]: r for r in await bot.ok("GET", "/v3/positionRisk")}
    assert set(left) == {"ETHUSDT"} and left["ETHUSDT"]["isolatedWallet"] == "60.00000000"
    await _ledger_adds_up(user, bot.portfolio_id)


async def test_ccxt_hedge_mode_long_and_short_of_one_symbol(
    app: FastAPI, user: User, live_url: str
) -> None:
    await set_price(app, "BTCUSDT", "60000")
    exchange, pid = await _ccxt(user, live_url)
    try:
        await exchange.load_markets()
        await exchange.set_position_mode(True)
        assert (await exchange.fetch_position_mode(SYMBOL))["hedged"] is True
        with pytest.raises(errors.OperationRejected, match="-4061"):  # BOTH in hedge mode
            await exchange.create_order(
                SYMBOL, "market", "buy", 0.01, None, {"positionSide": "BOTH"}
            )
        await exchange.create_order(SYMBOL, "market", "buy", 0.02, None, {"positionSide": "LONG"})
        await exchange.create_order(SYMBOL, "market", "sell", 0.01, None, {"positionSide": "SHORT"})
        with pytest.raises(errors.OperationRejected, match="-4068"):
            await exchange.set_position_mode(False)

        held = {p["side"]: p for p in await exchange.fetch_positions([SYMBOL])}
        assert held["long"]["contracts"] == 0.02 and held["short"]["contracts"] == 0.01
        # Each fill says which side of the hedge it traded (userTrades' positionSide).
        trades = await exchange.fetch_my_trades(SYMBOL)
        assert [(t["side"], t["info"]["positionSide"]) for t in trades] == [
            ("buy", "LONG"),
            ("sell", "SHORT"),
        ]
        assert held["long"]["info"]["positionSide"] == "LONG"
        assert held["short"]["info"]["positionSide"] == "SHORT"

        with pytest.raises(errors.BadRequest, match="-1106"):
            await exchange.fapiPrivatePostOrder(
                {
                    "symbol": "BTCUSDT",
                    "side": "SELL",
                    "type": "MARKET",
                    "quantity": "0.01",
                    "positionSide": "LONG",
                    "reduceOnly": "true",
                }
            )
        # Closing is by the opposite side on the same position side.
        closed = await exchange.create_order(
            SYMBOL, "market", "sell", 0.02, None, {"positionSide": "LONG"}
        )
        assert closed["status"] == "closed" and closed["info"]["positionSide"] == "LONG"
        (short,) = await exchange.fetch_positions([SYMBOL])
        assert short["side"] == "short" and short["contracts"] == 0.01
        # A stop closing the SHORT side only, on the Algo API with closePosition.
        await exchange.create_order(
            SYMBOL,
            "stop_market",
            "buy",
            None,
            None,
            {"stopPrice": 61000, "closePosition": True, "positionSide": "SHORT"},
        )
        await set_price(app, "BTCUSDT", "61500")

        async def flat() -> bool:
            return bool(await exchange.fetch_positions([SYMBOL]) == [])

        await _until(flat)
        await _ledger_adds_up(user, pid)
        await exchange.set_position_mode(False)
    finally:
        await exchange.close()


def _python_binance(base: str, api_key: str, api_secret: str) -> dict[str, Any]:
    client = Client(api_key, api_secret, ping=False)
    client.FUTURES_URL = f"{base}/fapi"
    seen: dict[str, Any] = {}
    seen["margin"] = client.futures_change_margin_type(symbol="BTCUSDT", marginType="ISOLATED")
    try:
        client.futures_change_margin_type(symbol="BTCUSDT", marginType="ISOLATED")
    except BinanceAPIException as exc:
        seen["again"] = (exc.status_code, exc.code, exc.message)
    seen["mode"] = client.futures_change_position_mode(dualSidePosition="true")
    seen["long"] = client.futures_create_order(
        symbol="BTCUSDT", side="BUY", type="MARKET", quantity=0.01, positionSide="LONG"
    )
    seen["positions"] = client.futures_position_information(symbol="BTCUSDT")
    seen["add"] = client.futures_change_position_margin(
        symbol="BTCUSDT", amount=5, type=1, positionSide="LONG"
    )
    seen["history"] = client.futures_position_margin_history(symbol="BTCUSDT")
    try:
        client.futures_change_position_mode(dualSidePosition="false")
    except BinanceAPIException as exc:
        seen["switch"] = exc.code
    return seen


async def test_python_binance_margin_type_and_position_mode(
    app: FastAPI, user: User, live_url: str
) -> None:
    await set_price(app, "BTCUSDT", "60000")
    portfolio = await user.portfolio()
    api_key, api_secret = await user.compat_key(portfolio["id"])
    seen = await asyncio.to_thread(_python_binance, live_url, api_key, api_secret)
    assert seen["margin"] == {"code": 200, "msg": "success"}
    assert seen["again"] == (400, -4046, "No need to change margin type.")
    assert seen["mode"] == {"code": 200, "msg": "success"}
    assert seen["long"]["positionSide"] == "LONG"
    by_side = {p["positionSide"]: p for p in seen["positions"]}
    assert set(by_side) == {"LONG", "SHORT"}
    assert by_side["LONG"]["positionAmt"] == "0.010" and by_side["SHORT"]["positionAmt"] == "0.000"
    assert by_side["LONG"]["isolatedWallet"] == "30.00000000"  # 600 at the default 20x
    assert seen["add"]["code"] == 200 and seen["add"]["type"] == 1
    assert [(h["type"], h["amount"], h["positionSide"]) for h in seen["history"]] == [
        (1, "5.00000000", "LONG")
    ]
    assert seen["switch"] == -4068
    await _ledger_adds_up(user, portfolio["id"])


async def test_mode_and_margin_errors_are_binance_shaped(app: FastAPI, bot: Bot) -> None:
    await set_price(app, "BTCUSDT", "60000")
    limit = {
        "symbol": "BTCUSDT",
        "side": "BUY",
        "type": "LIMIT",
        "quantity": "0.01",
        "price": "50000",
        "timeInForce": "GTC",
    }
    await bot.ok("POST", "/v1/order", limit)
    iso = {"symbol": "BTCUSDT", "marginType": "ISOLATED"}
    assert (await bot.error("POST", "/v1/marginType", iso))[:2] == (400, -4047)
    assert (await bot.error("POST", "/v1/positionSide/dual", {"dualSidePosition": "true"}))[:2] == (
        400,
        -4067,
    )
    wrong_side = {**limit, "positionSide": "LONG"}
    assert (await bot.error("POST", "/v1/order", wrong_side))[:2] == (400, -4061)
    assert (await bot.error("POST", "/v1/order", {**limit, "positionSide": "UP"}))[:2] == (
        400,
        -4060,
    )
    margin = {"symbol": "BTCUSDT", "amount": "10", "type": "3"}
    assert (await bot.error("POST", "/v1/positionMargin", margin))[:2] == (400, -1130)
    for amount in ("-5", "0", "abc", "0.0000001", "1" + "0" * 40):
        got = await bot.error(
            "POST", "/v1/positionMargin", {**margin, "type": "1", "amount": amount}
        )
        assert got[0] == 400 and got[1] in (-1100, -1111, -1130), (amount, got)
    assert (await bot.error("GET", "/v1/positionMargin/history", {"symbol": "NOPE"}))[1] == -1121
    assert await bot.ok("GET", "/v1/positionMargin/history", {"symbol": "BTCUSDT"}) == []
