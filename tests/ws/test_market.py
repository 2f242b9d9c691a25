"""Market channels: mark price per symbol (or all), 24 h ticker, klines."""

from fastapi import FastAPI

from tests.conftest import User
from tests.trading_api.helpers import set_price
from tests.ws.helpers import socket


async def test_mark_price_of_one_symbol(app: FastAPI, live_url: str, user: User) -> None:
    async with socket(live_url, await user.api_key()) as ws:
        await ws.subscribe("mark_price:btcusdt")
        await set_price(app, "BTCUSDT", "65000.5")
        message = await ws.wait_for(
            lambda m: m.get("type") == "mark_price" and m["data"]["mark_price"] == 65000.5
        )
    assert message["channel"] == "mark_price:BTCUSDT"
    data = message["data"]
    assert set(data) == {
        "symbol",
        "mark_price",
        "index_price",
        "last_price",
        "funding_rate",
        "next_funding_time",
        "time",
    }
    assert data["symbol"] == "BTCUSDT" and isinstance(data["time"], int)
    assert message["time"] == data["time"]


async def test_mark_price_of_every_symbol(live_url: str, user: User) -> None:
    async with socket(live_url, await user.api_key()) as ws:
        await ws.subscribe("mark_price", "mark_price:ETHUSDT")
        symbols: set[str] = set()
        while len(symbols) < 3:
            message = await ws.wait_type("mark_price")
            symbols.add(message["data"]["symbol"])
        # Subscribed both ways, ETHUSDT still comes once per tick.
        eth = [m for m in ws.seen if m.get("channel") == "mark_price:ETHUSDT"]
        times = [m["time"] for m in eth]
        assert len(times) == len(set(times))


async def test_ticker_and_klines(live_url: str, user: User) -> None:
    async with socket(live_url, await user.api_key()) as ws:
        reply = await ws.subscribe("ticker:ETHUSDT", "kline:ETHUSDT:1m", "kline:ETHUSDT:1h")
        assert reply["channels"] == ["ticker:ETHUSDT", "kline:ETHUSDT:1m", "kline:ETHUSDT:1h"]
        ticker = await ws.wait_type("ticker", within=15)
        kline = await ws.wait_for(lambda m: m.get("channel") == "kline:ETHUSDT:1h", within=5)
    data = ticker["data"]
    assert data["symbol"] == "ETHUSDT" and data["high_price"] >= data["low_price"]
    assert {"last_price", "mark_price", "price_change_percent", "quote_volume"} <= set(data)
    candle = kline["data"]
    assert candle["interval"] == "1h" and candle["closed"] is False
    assert candle["close_time"] - candle["open_time"] == 3_600_000 - 1
    assert candle["low"] <= candle["close"] <= candle["high"]
