"""Account, balance and position shapes (v2 and v3), modes, brackets and configuration."""

import httpx
from fastapi import FastAPI

from tests.conftest import User
from tests.fapi.helpers import Bot, make_bot
from tests.trading_api.helpers import set_price

ASSET_FIELDS = {
    "asset",
    "walletBalance",
    "unrealizedProfit",
    "marginBalance",
    "maintMargin",
    "initialMargin",
    "positionInitialMargin",
    "openOrderInitialMargin",
    "crossWalletBalance",
    "crossUnPnl",
    "availableBalance",
    "maxWithdrawAmount",
    "marginAvailable",
    "updateTime",
}
TOTALS = {
    "totalInitialMargin",
    "totalMaintMargin",
    "totalWalletBalance",
    "totalUnrealizedProfit",
    "totalMarginBalance",
    "totalPositionInitialMargin",
    "totalOpenOrderInitialMargin",
    "totalCrossWalletBalance",
    "totalCrossUnPnl",
    "availableBalance",
    "maxWithdrawAmount",
}


async def test_account_and_positions_after_trading(bot: Bot, app: FastAPI) -> None:
    await set_price(app, "BTCUSDT", "60000")
    await bot.ok(
        "POST",
        "/v1/order",
        {"symbol": "BTCUSDT", "side": "BUY", "type": "MARKET", "quantity": "0.1"},
    )
    await bot.ok(
        "POST",
        "/v1/order",
        {
            "symbol": "ETHUSDT",
            "side": "BUY",
            "type": "LIMIT",
            "quantity": "1",
            "price": "1000",
            "timeInForce": "GTC",
        },
    )
    await set_price(app, "BTCUSDT", "61000")

    v3 = await bot.ok("GET", "/v3/account")
    assert set(v3) >= TOTALS and set(v3["assets"][0]) == ASSET_FIELDS
    assert v3["totalWalletBalance"] == "9997.00000000"  # 3 USDT taker fee on 6,000
    assert v3["totalUnrealizedProfit"] == "100.00000000"
    assert v3["totalMarginBalance"] == "10097.00000000"
    assert v3["totalPositionInitialMargin"] == "305.00000000"  # 6,100 at 20x
    assert v3["totalOpenOrderInitialMargin"] == "50.00000000"  # 1,000 at 20x
    assert v3["availableBalance"] == "9742.00000000"
    assert v3["assets"][0]["updateTime"] > 0 and v3["assets"][0]["marginAvailable"] is True
    assert [p["symbol"] for p in v3["positions"]] == ["BTCUSDT", "ETHUSDT"]  # position, order

    v2 = await bot.ok("GET", "/v2/account")
    assert v2["canTrade"] is True and v2["feeTier"] == 0 and v2["multiAssetsMargin"] is False
    assert len(v2["positions"]) > 20  # every symbol
    btc = next(p for p in v2["positions"] if p["symbol"] == "BTCUSDT")
    assert btc["leverage"] == "20" and btc["isolated"] is False and btc["entryPrice"] == "60000.00"

    for version in ("/v2/balance", "/v3/balance"):
        [usdt] = await bot.ok("GET", version)
        assert usdt["balance"] == "9997.00000000" and usdt["crossUnPnl"] == "100.00000000"
        assert usdt["availableBalance"] == "9742.00000000" and usdt["updateTime"] > 0

    risk3 = await bot.ok("GET", "/v3/positionRisk")
    btc3 = next(p for p in risk3 if p["symbol"] == "BTCUSDT")
    assert btc3["positionAmt"] == "0.100" and btc3["notional"] == "6100.00000000"
    assert btc3["unRealizedProfit"] == "100.00000000" and btc3["markPrice"] == "61000.00000000"
    assert btc3["liquidationPrice"] == "0" and btc3["adl"] == 0  # no positive price liquidates
    assert float(btc3["breakEvenPrice"]) > 60000
    eth3 = next(p for p in risk3 if p["symbol"] == "ETHUSDT")
    assert eth3["positionAmt"] == "0.000" and eth3["bidNotional"] == "1000.00000000"
    only = await bot.ok("GET", "/v3/positionRisk", {"symbol": "ETHUSDT"})
    assert [p["symbol"] for p in only] == ["ETHUSDT"]

    risk2 = await bot.ok("GET", "/v2/positionRisk", {"symbol": "BTCUSDT"})
    assert risk2[0]["marginType"] == "cross" and risk2[0]["isAutoAddMargin"] == "false"
    assert risk2[0]["maxNotionalValue"] == "100000000"
    flat = await bot.ok("GET", "/v2/positionRisk", {"symbol": "SOLUSDT"})
    assert flat[0]["positionAmt"] == "0" and flat[0]["entryPrice"] == "0.0000"

    await set_price(app, "SOLUSDT", "100")
    await bot.ok(
        "POST",
        "/v1/order",
        {"symbol": "SOLUSDT", "side": "SELL", "type": "MARKET", "quantity": "10"},
    )
    [short] = await bot.ok("GET", "/v3/positionRisk", {"symbol": "SOLUSDT"})
    assert short["positionAmt"] == "-10" and short["notional"] == "-1000.00000000"
    assert float(short["liquidationPrice"]) > 100 and float(short["breakEvenPrice"]) < 100

    # Closing everything: v3 omits the symbol, v2 shows it flat.
    await bot.ok(
        "POST",
        "/v1/order",
        {
            "symbol": "SOLUSDT",
            "side": "BUY",
            "type": "MARKET",
            "quantity": "10",
            "reduceOnly": "true",
        },
    )
    await bot.ok("DELETE", "/v1/allOpenOrders", {"symbol": "ETHUSDT"})
    await bot.ok(
        "POST",
        "/v1/order",
        {
            "symbol": "BTCUSDT",
            "side": "SELL",
            "type": "MARKET",
            "quantity": "0.1",
            "reduceOnly": "true",
        },
    )
    assert await bot.ok("GET", "/v3/positionRisk") == []
    assert (await bot.ok("GET", "/v2/positionRisk", {"symbol": "BTCUSDT"}))[0]["positionAmt"] == (
        "0.000"
    )


async def test_modes_configuration_and_brackets(bot: Bot) -> None:
    assert await bot.ok("GET", "/v1/positionSide/dual") == {"dualSidePosition": False}
    assert (await bot.error("POST", "/v1/positionSide/dual", {"dualSidePosition": "false"}))[
        :2
    ] == (400, -4059)
    hedge = await bot.ok("POST", "/v1/positionSide/dual", {"dualSidePosition": "true"})
    assert hedge == {"code": 200, "msg": "success"}
    assert await bot.ok("GET", "/v1/positionSide/dual") == {"dualSidePosition": True}
    assert (await bot.ok("GET", "/v1/accountConfig"))["dualSidePosition"] is True
    assert (await bot.error("POST", "/v1/positionSide/dual", {"dualSidePosition": "TRUE"}))[:2] == (
        400,
        -4059,
    )
    await bot.ok("POST", "/v1/positionSide/dual", {"dualSidePosition": "false"})
    assert await bot.ok("GET", "/v1/multiAssetsMargin") == {"multiAssetsMargin": False}
    assert (await bot.error("POST", "/v1/multiAssetsMargin", {"multiAssetsMargin": "false"}))[
        1
    ] == -4171
    same = await bot.error("POST", "/v1/marginType", {"symbol": "BTCUSDT", "marginType": "CROSSED"})
    assert same == (400, -4046, "No need to change margin type.")
    isolated = await bot.ok(
        "POST", "/v1/marginType", {"symbol": "BTCUSDT", "marginType": "ISOLATED"}
    )
    assert isolated == {"code": 200, "msg": "success"}
    shown = await bot.ok("GET", "/v1/symbolConfig", {"symbol": "BTCUSDT"})
    assert shown[0]["marginType"] == "ISOLATED"
    again = await bot.error(
        "POST", "/v1/marginType", {"symbol": "BTCUSDT", "marginType": "isolated"}
    )
    assert again == (400, -4046, "No need to change margin type.")
    await bot.ok("POST", "/v1/marginType", {"symbol": "BTCUSDT", "marginType": "CROSSED"})
    bad = await bot.error("POST", "/v1/marginType", {"symbol": "BTCUSDT", "marginType": "BOTH"})
    assert bad[:2] == (400, -1130)

    brackets = await bot.ok("GET", "/v1/leverageBracket")
    assert len(brackets) > 20
    btc = await bot.ok("GET", "/v1/leverageBracket", {"symbol": "BTCUSDT"})
    first = btc["brackets"][0]
    assert first == {
        "bracket": 1,
        "initialLeverage": 125,
        "notionalCap": 50000,
        "notionalFloor": 0,
        "maintMarginRatio": 0.004,
        "cum": 0.0,
    }

    config = await bot.ok("GET", "/v1/symbolConfig", {"symbol": "BTCUSDT"})
    assert config == [
        {
            "symbol": "BTCUSDT",
            "marginType": "CROSSED",
            "isAutoAddMargin": "false",
            "leverage": 20,
            "maxNotionalValue": "100000000",
        }
    ]
    account = await bot.ok("GET", "/v1/accountConfig")
    assert account["dualSidePosition"] is False and account["canTrade"] is True
    fees = await bot.ok("GET", "/v1/commissionRate", {"symbol": "BTCUSDT"})
    assert fees == {
        "symbol": "BTCUSDT",
        "makerCommissionRate": "0.000200",
        "takerCommissionRate": "0.000500",
    }


async def test_v2_account_rows_are_each_portfolios_own(
    bot: Bot, user: User, fapi_client: httpx.AsyncClient, app: FastAPI
) -> None:
    """v2 lists every symbol, and the row of a symbol a portfolio has not touched is written once
    and shared between responses: it must never carry another portfolio's leverage, resting
    orders or position mode."""
    await set_price(app, "ETHUSDT", "1000")
    other = await make_bot(user, fapi_client)
    untouched = {p["symbol"]: p for p in (await other.ok("GET", "/v2/account"))["positions"]}
    await bot.ok("POST", "/v1/leverage", {"symbol": "ETHUSDT", "leverage": 5})
    eth_bid = {"symbol": "ETHUSDT", "side": "BUY", "type": "LIMIT", "quantity": "1"}
    await bot.ok("POST", "/v1/order", {**eth_bid, "price": "900", "timeInForce": "GTC"})
    await other.ok("POST", "/v1/positionSide/dual", {"dualSidePosition": "true"})

    mine = {p["symbol"]: p for p in (await bot.ok("GET", "/v2/account"))["positions"]}
    theirs = (await other.ok("GET", "/v2/account"))["positions"]
    assert mine["ETHUSDT"]["leverage"] == "5" and mine["ETHUSDT"]["maxNotional"] != "100000000"
    assert mine["ETHUSDT"]["bidNotional"] == "900.00000000"
    assert mine["ETHUSDT"]["openOrderInitialMargin"] == "180.00000000"  # 900 at 5x
    assert {p["positionSide"] for p in mine.values()} == {"BOTH"}
    assert len(theirs) == 2 * len(mine)  # hedge mode: LONG and SHORT for every symbol
    for row in theirs:
        assert row["leverage"] == "20" and row["bidNotional"] == "0.00000000", row
    eth_long = next(p for p in theirs if p["symbol"] == "ETHUSDT" and p["positionSide"] == "LONG")
    assert eth_long["openOrderInitialMargin"] == "0.00000000"
    again = {p["symbol"]: p for p in (await bot.ok("GET", "/v2/account"))["positions"]}
    assert again == mine and again["SOLUSDT"] == untouched["SOLUSDT"]
