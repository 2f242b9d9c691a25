"""Public market data in Binance's shapes (contract §4.1–4.7, §4.17)."""

from decimal import Decimal

import httpx
from fastapi import FastAPI

from tests.trading_api.helpers import set_price

SYMBOL_FIELDS = {
    "symbol",
    "pair",
    "contractType",
    "deliveryDate",
    "onboardDate",
    "status",
    "maintMarginPercent",
    "requiredMarginPercent",
    "baseAsset",
    "quoteAsset",
    "marginAsset",
    "pricePrecision",
    "quantityPrecision",
    "baseAssetPrecision",
    "quotePrecision",
    "underlyingType",
    "underlyingSubType",
    "settlePlan",
    "triggerProtect",
    "liquidationFee",
    "marketTakeBound",
    "filters",
    "orderTypes",
    "timeInForce",
}


async def test_ping_time_and_exchange_info(fapi_client: httpx.AsyncClient) -> None:
    assert (await fapi_client.get("/fapi/v1/ping")).json() == {}
    assert isinstance((await fapi_client.get("/fapi/v1/time")).json()["serverTime"], int)
    response = await fapi_client.get("/fapi/v1/exchangeInfo", headers={"X-MBX-APIKEY": "junk"})
    assert response.headers["content-type"] == "application/json"
    info = response.json()
    assert info["timezone"] == "UTC" and info["futuresType"] == "U_MARGINED"
    assert info["exchangeFilters"] == [] and info["assets"][0]["asset"] == "USDT"
    assert {r["rateLimitType"] for r in info["rateLimits"]} == {"REQUEST_WEIGHT", "ORDERS"}
    btc = next(s for s in info["symbols"] if s["symbol"] == "BTCUSDT")
    assert set(btc) >= SYMBOL_FIELDS
    assert btc["contractType"] == "PERPETUAL" and btc["status"] == "TRADING"
    assert btc["deliveryDate"] == 4133404800000 and btc["marginAsset"] == "USDT"
    conditional = {
        "STOP",
        "STOP_MARKET",
        "TAKE_PROFIT",
        "TAKE_PROFIT_MARKET",
        "TRAILING_STOP_MARKET",
    }
    for listed in info["symbols"]:  # every symbol takes the stop and take-profit orders
        assert set(listed["orderTypes"]) == {"LIMIT", "MARKET"} | conditional, listed["symbol"]
    filters = {f["filterType"]: f for f in btc["filters"]}
    assert filters["PRICE_FILTER"]["tickSize"] == "0.10"
    assert filters["LOT_SIZE"] == {
        "filterType": "LOT_SIZE",
        "minQty": "0.001",
        "maxQty": "1000",
        "stepSize": "0.001",
    }
    assert filters["MARKET_LOT_SIZE"]["maxQty"] == "120"
    assert filters["MIN_NOTIONAL"]["notional"] == "100"
    assert filters["MAX_NUM_ORDERS"]["limit"] == 200


async def test_prices_tickers_and_premium_index(
    fapi_client: httpx.AsyncClient, app: FastAPI
) -> None:
    await set_price(app, "BTCUSDT", "60000")
    for version in ("v1", "v2"):
        one = (await fapi_client.get(f"/fapi/{version}/ticker/price?symbol=BTCUSDT")).json()
        assert one["price"] == "60000.00" and isinstance(one["time"], int)
        many = (await fapi_client.get(f"/fapi/{version}/ticker/price")).json()
        assert isinstance(many, list) and len(many) > 20
    stats = (await fapi_client.get("/fapi/v1/ticker/24hr?symbol=BTCUSDT")).json()
    assert stats["lastPrice"] == "60000.00" and isinstance(stats["closeTime"], int)
    assert {
        "priceChange",
        "priceChangePercent",
        "weightedAvgPrice",
        "volume",
        "quoteVolume",
        "openPrice",
        "highPrice",
        "lowPrice",
        "count",
    } <= set(stats)
    everything = (await fapi_client.get("/fapi/v1/ticker/24hr")).json()
    assert len(everything) > 20
    premium = (await fapi_client.get("/fapi/v1/premiumIndex?symbol=btcusdt")).json()
    assert premium["markPrice"] == "60000.00" and premium["nextFundingTime"] > 0
    assert Decimal(premium["lastFundingRate"]) > 0
    assert len((await fapi_client.get("/fapi/v1/premiumIndex")).json()) > 20


async def test_klines_mark_klines_and_funding(fapi_client: httpx.AsyncClient) -> None:
    rows = (await fapi_client.get("/fapi/v1/klines?symbol=BTCUSDT&interval=1h&limit=3")).json()
    assert len(rows) == 3 and all(len(r) == 12 for r in rows)
    first = rows[0]
    assert isinstance(first[0], int) and isinstance(first[6], int) and isinstance(first[8], int)
    assert all(isinstance(first[i], str) for i in (1, 2, 3, 4, 5, 7, 9, 10, 11))
    assert rows[1][0] - rows[0][0] == 3_600_000
    ranged = (
        await fapi_client.get(
            f"/fapi/v1/klines?symbol=BTCUSDT&interval=1m&startTime={rows[0][0]}&limit=2"
        )
    ).json()
    assert ranged[0][0] == rows[0][0]
    mark = await fapi_client.get("/fapi/v1/markPriceKlines?symbol=BTCUSDT&interval=1h&limit=2")
    assert [r[5] for r in mark.json()] == ["0", "0"]
    index = await fapi_client.get("/fapi/v1/indexPriceKlines?pair=BTCUSDT&interval=1d&limit=2")
    assert len(index.json()) == 2
    bad = await fapi_client.get("/fapi/v1/klines?symbol=BTCUSDT&interval=7m")
    assert bad.status_code == 400 and bad.json()["code"] == -1120
    funding = (await fapi_client.get("/fapi/v1/fundingRate?symbol=BTCUSDT&limit=5")).json()
    assert len(funding) == 5
    times = [f["fundingTime"] for f in funding]
    assert times == sorted(times) and times[1] - times[0] == 8 * 3_600_000
    assert {"symbol", "fundingRate", "fundingTime", "markPrice"} == set(funding[0])
    all_symbols = (await fapi_client.get("/fapi/v1/fundingRate?limit=10")).json()
    assert len(all_symbols) == 10


async def test_synthetic_depth_and_book_ticker(
    fapi_client: httpx.AsyncClient, app: FastAPI
) -> None:
    await set_price(app, "BTCUSDT", "60000")
    book = (await fapi_client.get("/fapi/v1/depth?symbol=BTCUSDT&limit=5")).json()
    assert set(book) == {"lastUpdateId", "E", "T", "bids", "asks"}
    bids = [Decimal(p) for p, _ in book["bids"]]
    asks = [Decimal(p) for p, _ in book["asks"]]
    assert bids == sorted(bids, reverse=True) and asks == sorted(asks)
    assert bids[0] == Decimal("59999.9") and asks[0] == Decimal("60000.1") and len(bids) == 5
    assert len((await fapi_client.get("/fapi/v1/depth?symbol=BTCUSDT")).json()["asks"]) == 500
    top = (await fapi_client.get("/fapi/v1/ticker/bookTicker?symbol=BTCUSDT")).json()
    assert (top["bidPrice"], top["askPrice"]) == ("59999.90", "60000.10")
    assert Decimal(top["bidQty"]) * 60000 >= 49_000
    assert len((await fapi_client.get("/fapi/v1/ticker/bookTicker")).json()) > 20
