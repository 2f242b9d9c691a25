"""ccxt (binanceusdm, pinned) drives the service over real HTTP: the spec's sequence and errors."""

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import ccxt.async_support as ccxt_async
import pytest
from ccxt.base import errors
from fastapi import FastAPI

from tests.conftest import User
from tests.fapi.clients import ccxt_usdm, with_linear_errors
from tests.trading_api.helpers import equity, positions, set_price, until_liquidated

SYMBOL = "BTC/USDT:USDT"
Make = Callable[..., Awaitable[Any]]


@pytest.fixture
async def make_exchange(live_url: str) -> AsyncIterator[Make]:
    made: list[Any] = []

    async def make(api_key: str, api_secret: str, **options: Any) -> Any:
        exchange = ccxt_usdm(live_url, api_key, api_secret, **options)
        made.append(exchange)
        return exchange

    yield make
    for exchange in made:
        await exchange.close()


@pytest.fixture
async def keyed(user: User) -> tuple[User, int, str, str]:
    portfolio = await user.portfolio()
    api_key, api_secret = await user.compat_key(portfolio["id"])
    return user, portfolio["id"], api_key, api_secret


async def test_the_spec_sequence(
    app: FastAPI, make_exchange: Make, keyed: tuple[User, int, str, str]
) -> None:
    user, portfolio_id, api_key, api_secret = keyed
    await set_price(app, "BTCUSDT", "60000")
    exchange = await make_exchange(api_key, api_secret)

    markets = await exchange.load_markets()
    market = markets[SYMBOL]
    assert market["type"] == "swap" and market["linear"] and market["settle"] == "USDT"
    assert market["precision"]["amount"] == 0.001 and market["precision"]["price"] == 0.1
    assert market["limits"]["cost"]["min"] == 100

    balance = await exchange.fetch_balance()
    assert balance["USDT"] == {"free": 10000.0, "used": 0.0, "total": 10000.0}

    bought = await exchange.create_order(SYMBOL, "market", "buy", 0.01)
    assert bought["status"] == "closed" and bought["filled"] == 0.01
    assert bought["average"] == 60000 and bought["cost"] == 600

    held = await exchange.fetch_positions([SYMBOL])
    assert len(held) == 1
    assert held[0]["side"] == "long" and held[0]["contracts"] == 0.01
    assert held[0]["entryPrice"] == 60000 and held[0]["notional"] == 600

    trades = await exchange.fetch_my_trades(SYMBOL)
    assert [(t["side"], t["amount"], t["price"]) for t in trades] == [("buy", 0.01, 60000)]
    assert trades[0]["fee"] == {"cost": 0.3, "currency": "USDT"}
    assert trades[0]["takerOrMaker"] == "taker" and trades[0]["order"] == bought["id"]

    sold = await exchange.create_order(SYMBOL, "market", "sell", 0.01, None, {"reduceOnly": True})
    assert sold["status"] == "closed" and sold["reduceOnly"] is True
    assert await exchange.fetch_positions([SYMBOL]) == []
    assert await positions(user, portfolio_id) == {}

    resting = await exchange.create_order(SYMBOL, "limit", "buy", 0.01, 50000)
    assert resting["status"] == "open" and resting["price"] == 50000
    listed = await exchange.fetch_open_orders(SYMBOL)
    assert [o["id"] for o in listed] == [resting["id"]]
    assert listed[0]["timestamp"] > 0 and listed[0]["remaining"] == 0.01

    canceled = await exchange.cancel_order(resting["id"], SYMBOL)
    assert canceled["status"] == "canceled"
    assert await exchange.fetch_open_orders(SYMBOL) == []

    balance = await exchange.fetch_balance()
    assert balance["USDT"]["total"] == pytest.approx(9999.4)  # two taker fees of 0.3
    assert (await equity(user, portfolio_id))["balance"] == pytest.approx(9999.4)


async def test_leverage_fetch_order_and_extras(
    app: FastAPI, make_exchange: Make, keyed: tuple[User, int, str, str]
) -> None:
    user, portfolio_id, api_key, api_secret = keyed
    await set_price(app, "ETHUSDT", "3000")
    exchange = await make_exchange(api_key, api_secret)
    await exchange.load_markets()

    changed = await exchange.set_leverage(10, "ETH/USDT:USDT")
    assert changed["leverage"] == 10 and changed["symbol"] == "ETHUSDT"
    assert (await exchange.fetch_leverage("ETH/USDT:USDT"))["longLeverage"] == 10

    placed = await exchange.create_order("ETH/USDT:USDT", "market", "sell", 0.5)
    fetched = await exchange.fetch_order(placed["id"], "ETH/USDT:USDT")
    assert fetched["status"] == "closed" and fetched["side"] == "sell"
    assert fetched["filled"] == 0.5 and fetched["average"] == 3000
    by_client = await exchange.fetch_order(
        None, "ETH/USDT:USDT", {"origClientOrderId": placed["clientOrderId"]}
    )
    assert by_client["id"] == placed["id"]

    short = (await exchange.fetch_positions(["ETH/USDT:USDT"]))[0]
    assert short["side"] == "short" and short["contracts"] == 0.5
    assert short["initialMargin"] == pytest.approx(150)  # 1500 notional at 10x
    assert short["initialMarginPercentage"] == pytest.approx(0.1)
    assert (await positions(user, portfolio_id))["ETHUSDT"]["leverage"] == 10

    orders = await exchange.fetch_orders("ETH/USDT:USDT")
    assert [o["id"] for o in orders] == [placed["id"]]
    ticker = await exchange.fetch_ticker("ETH/USDT:USDT")
    assert ticker["last"] == 3000
    book = await exchange.fetch_order_book("ETH/USDT:USDT", 5)
    assert book["bids"][0][0] < 3000 < book["asks"][0][0]
    rate = await exchange.fetch_funding_rate("ETH/USDT:USDT")
    assert rate["markPrice"] == 3000 and rate["fundingRate"] is not None
    assert await exchange.fetch_funding_intervals() == {}  # no symbol differs from 8 hours
    assert (await exchange.fetch_last_prices(["ETH/USDT:USDT"]))["ETH/USDT:USDT"]["price"] == 3000
    candles = await exchange.fetch_ohlcv("ETH/USDT:USDT", "1h", limit=3)
    assert len(candles) == 3 and candles[-1][4] == 3000
    assert (await exchange.fetch_position_mode())["hedged"] is False
    tiers = await exchange.fetch_leverage_tiers(["ETH/USDT:USDT"])
    assert tiers["ETH/USDT:USDT"][0]["maxLeverage"] == 125
    fee = await exchange.fetch_trading_fee("ETH/USDT:USDT")
    assert fee["taker"] == 0.0005 and fee["maker"] == 0.0002
    history = await exchange.fetch_funding_history("ETH/USDT:USDT")
    assert history == []
    with pytest.raises(errors.MarginModeAlreadySet):
        await exchange.set_margin_mode("cross", "ETH/USDT:USDT")
    with pytest.raises(errors.OperationRejected, match="-4048"):  # an ETH position is open
        await exchange.set_margin_mode("isolated", "ETH/USDT:USDT")
    assert (await exchange.fetch_time()) > 0


async def test_errors_raise_the_ccxt_classes_a_bot_expects(
    app: FastAPI, make_exchange: Make, keyed: tuple[User, int, str, str]
) -> None:
    user, portfolio_id, api_key, api_secret = keyed
    await set_price(app, "BTCUSDT", "60000")

    wrong_secret = await make_exchange(api_key, "0" * 64)
    with pytest.raises(errors.AuthenticationError):
        await wrong_secret.fetch_balance()
    unknown_key = await make_exchange("f" * 64, api_secret)
    with pytest.raises(errors.AuthenticationError):
        await unknown_key.fetch_balance()
    stale = await make_exchange(api_key, api_secret, timeDifference=120_000)
    with pytest.raises(errors.InvalidNonce):
        await stale.fetch_balance()

    exchange = await make_exchange(api_key, api_secret)
    with pytest.raises(errors.ExchangeError) as too_big:
        await exchange.create_order(SYMBOL, "market", "buy", 10)
    assert not isinstance(too_big.value, errors.InsufficientFunds)  # custom host (§6)
    assert '"code":-2019' in str(too_big.value)
    with pytest.raises(errors.ExchangeError, match="-2022"):
        await exchange.create_order(SYMBOL, "market", "sell", 0.01, None, {"reduceOnly": True})
    with pytest.raises(errors.OrderNotFound):
        await exchange.cancel_order("987654321", SYMBOL)
    with pytest.raises(errors.OrderNotFound):
        await exchange.fetch_order("987654321", SYMBOL)

    mapped = with_linear_errors(await make_exchange(api_key, api_secret))
    with pytest.raises(errors.InsufficientFunds):
        await mapped.create_order(SYMBOL, "market", "buy", 10)
    with pytest.raises(errors.InvalidOrder):
        await mapped.create_order(SYMBOL, "market", "sell", 0.01, None, {"reduceOnly": True})
    with pytest.raises(errors.InvalidOrder):
        await mapped.create_order(SYMBOL, "market", "buy", 0.001)  # below min notional
    with pytest.raises(errors.OrderNotFillable):
        await mapped.create_order(SYMBOL, "limit", "buy", 0.01, 61000, {"postOnly": True})
    with pytest.raises(errors.BadSymbol):
        await mapped.fapiPublicGetTickerPrice({"symbol": "NOPEUSDT"})

    # Nothing of the refused orders touched the account.
    assert await positions(user, portfolio_id) == {}
    assert (await equity(user, portfolio_id))["balance"] == 10000
    balance = await exchange.fetch_balance()
    assert balance["USDT"]["total"] == 10000


async def test_binance_class_with_linear_markets_only(
    app: FastAPI, live_url: str, keyed: tuple[User, int, str, str]
) -> None:
    _, _, api_key, api_secret = keyed
    await set_price(app, "BTCUSDT", "60000")
    from tests.fapi.clients import ccxt_config

    config = ccxt_config(
        live_url, api_key, api_secret, defaultType="future", fetchMarkets={"types": ["linear"]}
    )
    exchange = ccxt_async.binance(config)
    try:
        await exchange.load_markets()
        assert exchange.markets[SYMBOL]["swap"]
        placed = await exchange.create_order(SYMBOL, "market", "buy", 0.002)
        assert placed["status"] == "closed"
        assert (await exchange.fetch_balance())["USDT"]["used"] > 0
    finally:
        await exchange.close()


async def test_a_liquidation_is_listed_by_fetch_my_liquidations(
    app: FastAPI, make_exchange: Make, keyed: tuple[User, int, str, str]
) -> None:
    """GET /fapi/v1/forceOrders: the orders the engine placed to liquidate, in Binance's shape."""
    _user, portfolio_id, api_key, api_secret = keyed
    await set_price(app, "BTCUSDT", "60000")
    exchange = await make_exchange(api_key, api_secret)
    await exchange.load_markets()
    assert await exchange.fetch_my_liquidations(SYMBOL) == []
    await exchange.set_leverage(50, SYMBOL)
    await exchange.create_order(SYMBOL, "market", "buy", 8)  # 480,000 notional on 10,000
    await set_price(app, "BTCUSDT", "58900")  # -8,800: past the maintenance margin
    await until_liquidated(app, portfolio_id)

    listed = await exchange.fetch_my_liquidations(SYMBOL)
    assert len(listed) == 1, listed
    liquidation = listed[0]
    assert liquidation["symbol"] == SYMBOL and liquidation["side"] == "sell"
    assert liquidation["contracts"] == 8 and liquidation["price"] == 58900
    assert liquidation["timestamp"] is not None
    assert liquidation["info"]["status"] == "FILLED"
    assert await exchange.fetch_my_liquidations() == listed  # every symbol
    adl = await exchange.fetch_my_liquidations(SYMBOL, params={"autoCloseType": "ADL"})
    assert adl == []  # auto-deleveraging is not simulated
    with pytest.raises(errors.BadRequest):
        await exchange.fetch_my_liquidations(SYMBOL, params={"autoCloseType": "MARGIN_CALL"})
