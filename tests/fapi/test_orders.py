"""Orders through /fapi: types, time in force, reduce-only, client ids, filters, history."""

from typing import Any

from fastapi import FastAPI

from tests.fapi.helpers import Bot
from tests.trading_api.helpers import equity, positions, set_price, wait_for_status

BTC = {"symbol": "BTCUSDT"}
MARKET_BUY = {**BTC, "side": "BUY", "type": "MARKET", "quantity": "0.01"}


def limit(
    side: str, price: str, qty: str = "0.01", tif: str = "GTC", **extra: Any
) -> dict[str, Any]:
    return {
        **BTC,
        "side": side,
        "type": "LIMIT",
        "quantity": qty,
        "price": price,
        "timeInForce": tif,
        **extra,
    }


async def test_market_order_result_and_ack(bot: Bot, app: FastAPI) -> None:
    await set_price(app, "BTCUSDT", "60000")
    result = await bot.ok(
        "POST",
        "/v1/order",
        {**MARKET_BUY, "newOrderRespType": "RESULT", "newClientOrderId": "x-cvBPrNm9abc"},
    )
    assert result["status"] == "FILLED" and result["executedQty"] == "0.010"
    assert result["avgPrice"] == "60000.00" and result["cumQuote"] == "600.00000000"
    assert result["cumQty"] == "0.010" and result["clientOrderId"] == "x-cvBPrNm9abc"
    assert result["price"] == "0" and result["origType"] == "MARKET"
    assert isinstance(result["orderId"], int) and isinstance(result["updateTime"], int)
    assert "time" not in result
    ack = await bot.ok("POST", "/v1/order", {**MARKET_BUY, "newOrderRespType": "ACK"})
    assert ack["status"] == "FILLED" and ack["clientOrderId"].startswith("pt-")
    queried = await bot.ok("GET", "/v1/order", {**BTC, "orderId": ack["orderId"]})
    assert queried["time"] > 0 and "cumQty" not in queried
    by_client = await bot.ok("GET", "/v1/order", {**BTC, "origClientOrderId": "x-cvBPrNm9abc"})
    assert by_client["orderId"] == result["orderId"]
    assert (await positions(bot.user, bot.portfolio_id))["BTCUSDT"]["quantity"] == 0.02
    duplicate = await bot.error(
        "POST", "/v1/order", {**MARKET_BUY, "newClientOrderId": "x-cvBPrNm9abc"}
    )
    assert duplicate[:2] == (400, -4116)


async def test_limit_time_in_force_and_post_only(bot: Bot, app: FastAPI) -> None:
    await set_price(app, "BTCUSDT", "60000")
    resting = await bot.ok("POST", "/v1/order", limit("BUY", "59000"))
    assert resting["status"] == "NEW" and resting["executedQty"] == "0.000"
    assert resting["price"] == "59000.00" and resting["timeInForce"] == "GTC"
    taker = await bot.ok("POST", "/v1/order", limit("BUY", "61000"))
    assert taker["status"] == "FILLED" and taker["avgPrice"] == "60000.00"
    ioc = await bot.ok("POST", "/v1/order", limit("BUY", "59000", tif="IOC"))
    assert ioc["status"] == "EXPIRED"
    assert (await bot.error("POST", "/v1/order", limit("BUY", "59000", tif="FOK")))[:2] == (
        400,
        -5021,
    )
    assert (await bot.error("POST", "/v1/order", limit("BUY", "61000", tif="GTX")))[:2] == (
        400,
        -5022,
    )
    post_only = await bot.ok("POST", "/v1/order", limit("SELL", "62000", tif="GTX"))
    assert post_only["status"] == "NEW" and post_only["timeInForce"] == "GTX"

    open_now = await bot.ok("GET", "/v1/openOrders", BTC)
    assert [o["orderId"] for o in open_now] == [resting["orderId"], post_only["orderId"]]
    one = await bot.ok("GET", "/v1/openOrder", {**BTC, "orderId": resting["orderId"]})
    assert one["status"] == "NEW"
    filled_one = await bot.error("GET", "/v1/openOrder", {**BTC, "orderId": taker["orderId"]})
    assert filled_one[:2] == (400, -2013)

    # The market comes down to the resting buy: it fills as maker at its limit.
    await set_price(app, "BTCUSDT", "58900")
    await wait_for_status(bot.user, resting["orderId"], "filled")
    filled = await bot.ok("GET", "/v1/order", {**BTC, "orderId": resting["orderId"]})
    assert filled["status"] == "FILLED" and filled["avgPrice"] == "59000.00"
    trades = await bot.ok("GET", "/v1/userTrades", {**BTC, "orderId": resting["orderId"]})
    assert [(t["maker"], t["commission"]) for t in trades] == [(True, "0.11800000")]

    canceled = await bot.ok("DELETE", "/v1/allOpenOrders", BTC)
    assert canceled == {"code": 200, "msg": "The operation of cancel all open order is done."}
    assert await bot.ok("GET", "/v1/openOrders", {}) == []
    gone = await bot.ok("GET", "/v1/order", {**BTC, "orderId": post_only["orderId"]})
    assert gone["status"] == "CANCELED"


async def test_reduce_only_forced_to_reduce(bot: Bot, app: FastAPI) -> None:
    await set_price(app, "BTCUSDT", "60000")
    flat = await bot.error(
        "POST", "/v1/order", {**MARKET_BUY, "side": "SELL", "reduceOnly": "true"}
    )
    assert flat[:2] == (400, -2022)
    await bot.ok("POST", "/v1/order", MARKET_BUY)
    growing = await bot.error("POST", "/v1/order", {**MARKET_BUY, "reduceOnly": "TRUE"})
    assert growing[:2] == (400, -2022)
    # A reduce-only larger than the position closes it and no more; exempt from min notional.
    await set_price(app, "BTCUSDT", "61000")
    closed = await bot.ok(
        "POST",
        "/v1/order",
        {**MARKET_BUY, "side": "SELL", "quantity": "0.05", "reduceOnly": "true"},
    )
    assert closed["status"] == "FILLED" and closed["executedQty"] == "0.010"
    assert closed["reduceOnly"] is True
    assert await positions(bot.user, bot.portfolio_id) == {}
    account = await equity(bot.user, bot.portfolio_id)
    assert account["balance"] == 10000 - 0.3 + 10 - 0.305
    income = await bot.ok("GET", "/v1/income", BTC)
    assert sorted(i["incomeType"] for i in income) == ["COMMISSION", "COMMISSION", "REALIZED_PNL"]
    pnl = await bot.ok("GET", "/v1/income", {"incomeType": "REALIZED_PNL"})
    assert [i["income"] for i in pnl] == ["10.00000000"]
    assert await bot.ok("GET", "/v1/income", {"incomeType": "FUNDING_FEE"}) == []
    transfers = await bot.ok("GET", "/v1/income", {"incomeType": "TRANSFER"})
    assert [(t["income"], t["symbol"]) for t in transfers] == [("10000.00000000", "")]


async def test_filter_violations_have_binance_codes(bot: Bot, app: FastAPI) -> None:
    await set_price(app, "BTCUSDT", "60000")
    cases = [
        ({**MARKET_BUY, "quantity": "0.0015"}, -1111),  # finer than quantityPrecision 3
        ({**MARKET_BUY, "quantity": "0"}, -4003),
        ({**MARKET_BUY, "quantity": "-1"}, -4003),
        ({**MARKET_BUY, "quantity": "500"}, -4005),  # above the market max 120
        ({**MARKET_BUY, "quantity": "0.001"}, -4164),
        (limit("BUY", "59000.005"), -1111),
        (limit("BUY", "59000.05"), -4014),
        (limit("BUY", "-5"), -4001),
        (limit("BUY", "1"), -4013),
        (limit("BUY", "9999999"), -4002),
        ({**MARKET_BUY, "side": "UP"}, -1117),
        ({**MARKET_BUY, "type": "SPOT"}, -1116),
        ({**MARKET_BUY, "type": "STOP_MARKET", "stopPrice": "1"}, -2021),  # already reached
        (limit("BUY", "59000", tif="GTD"), -1115),
        ({**MARKET_BUY, "price": "60000"}, -1106),
        ({**MARKET_BUY, "closePosition": "true"}, -1106),
        ({**MARKET_BUY, "positionSide": "LONG"}, -4061),
        ({**MARKET_BUY, "newClientOrderId": "spaces are bad"}, -4015),
        ({**MARKET_BUY, "symbol": "NOPEUSDT"}, -1121),
        ({**MARKET_BUY, "quantity": "100"}, -2019),
        (
            {
                "symbol": "BTCUSDT",
                "side": "BUY",
                "type": "LIMIT",
                "quantity": "0.01",
                "price": "59000",
            },
            -1102,
        ),  # LIMIT needs timeInForce
        ({"symbol": "BTCUSDT", "side": "BUY", "type": "MARKET"}, -1102),
    ]
    for params, code in cases:
        status, got, msg = await bot.error("POST", "/v1/order", params)
        assert (status, got) == (400, code), (params, msg)
        assert msg
    assert await positions(bot.user, bot.portfolio_id) == {}
    assert await bot.ok("GET", "/v1/allOrders", BTC) == []


async def test_leverage_caps_the_position(bot: Bot, app: FastAPI) -> None:
    await set_price(app, "BTCUSDT", "60000")
    changed = await bot.ok("POST", "/v1/leverage", {**BTC, "leverage": 125})
    assert changed == {"leverage": 125, "maxNotionalValue": "50000", "symbol": "BTCUSDT"}
    too_big = await bot.error("POST", "/v1/order", {**MARKET_BUY, "quantity": "1"})
    assert too_big[:2] == (400, -2027)
    assert (await bot.error("POST", "/v1/leverage", {**BTC, "leverage": 126}))[:2] == (400, -4028)
    assert (await bot.error("POST", "/v1/leverage", {**BTC, "leverage": 0}))[:2] == (400, -4028)
    assert (await bot.error("POST", "/v1/leverage", {**BTC, "leverage": "ten"}))[:2] == (400, -1102)
    lowered = await bot.ok("POST", "/v1/leverage", {**BTC, "leverage": 20})
    assert lowered["maxNotionalValue"] == "100000000"
    await bot.ok("POST", "/v1/order", {**MARKET_BUY, "quantity": "1"})  # 60,000 at 20x
    refused = await bot.error("POST", "/v1/leverage", {**BTC, "leverage": 125})
    assert refused[:2] == (400, -2027)
    risk = await bot.ok("GET", "/v2/positionRisk", BTC)
    assert risk[0]["leverage"] == "20"


async def test_cancel_and_query_unknown_orders(bot: Bot, app: FastAPI) -> None:
    await set_price(app, "BTCUSDT", "60000")
    missing = {**BTC, "orderId": 99999999}
    assert (await bot.error("GET", "/v1/order", missing))[:2] == (400, -2013)
    assert (await bot.error("DELETE", "/v1/order", missing))[:2] == (400, -2011)
    by_client = {**BTC, "origClientOrderId": "never-used"}
    assert (await bot.error("DELETE", "/v1/order", by_client))[:2] == (400, -2011)
    assert (await bot.error("DELETE", "/v1/order", BTC))[:2] == (400, -1102)
    filled = await bot.ok("POST", "/v1/order", MARKET_BUY)
    again = await bot.error("DELETE", "/v1/order", {**BTC, "orderId": filled["orderId"]})
    assert again[:2] == (400, -2011)
    other_symbol = await bot.error(
        "GET", "/v1/order", {"symbol": "ETHUSDT", "orderId": filled["orderId"]}
    )
    assert other_symbol[:2] == (400, -2013)


async def test_orders_of_another_portfolio_are_invisible(bot: Bot, app: FastAPI) -> None:
    from tests.fapi.helpers import make_bot

    await set_price(app, "BTCUSDT", "60000")
    mine = await bot.ok("POST", "/v1/order", limit("BUY", "50000"))
    other = await make_bot(bot.user, bot.client)  # same user, another portfolio and key
    assert (await other.error("GET", "/v1/order", {**BTC, "orderId": mine["orderId"]}))[1] == -2013
    assert (await other.error("DELETE", "/v1/order", {**BTC, "orderId": mine["orderId"]}))[
        1
    ] == -2011
    assert await other.ok("GET", "/v1/openOrders", BTC) == []
    assert await other.ok("GET", "/v1/userTrades", BTC) == []


async def test_history_paging(bot: Bot, app: FastAPI) -> None:
    await set_price(app, "BTCUSDT", "60000")
    ids = [(await bot.ok("POST", "/v1/order", MARKET_BUY))["orderId"] for _ in range(4)]
    everything = await bot.ok("GET", "/v1/allOrders", BTC)
    assert [o["orderId"] for o in everything] == ids
    assert [o["orderId"] for o in await bot.ok("GET", "/v1/allOrders", {**BTC, "limit": 2})] == ids[
        2:
    ]
    from_second = await bot.ok("GET", "/v1/allOrders", {**BTC, "orderId": ids[1], "limit": 2})
    assert [o["orderId"] for o in from_second] == ids[1:3]
    trades = await bot.ok("GET", "/v1/userTrades", BTC)
    assert [t["orderId"] for t in trades] == ids
    page = await bot.ok("GET", "/v1/userTrades", {**BTC, "fromId": trades[2]["id"]})
    assert [t["id"] for t in page] == [t["id"] for t in trades[2:]]
    start = trades[0]["time"]
    windowed = await bot.ok("GET", "/v1/userTrades", {**BTC, "startTime": start, "limit": 1})
    assert [t["id"] for t in windowed] == [trades[0]["id"]]
    mixed = await bot.error("GET", "/v1/userTrades", {**BTC, "fromId": 1, "startTime": start})
    assert mixed[:2] == (400, -1128)
    assert await bot.ok("GET", "/v1/userTrades", {**BTC, "endTime": start - 1}) == []
    commissions = await bot.ok("GET", "/v1/income", {"incomeType": "COMMISSION", "limit": 3})
    assert len(commissions) == 3
    second_page = await bot.ok(
        "GET", "/v1/income", {"incomeType": "COMMISSION", "limit": 3, "page": 2}
    )
    assert len(second_page) == 1
