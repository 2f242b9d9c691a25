"""Public market data: ping, time, exchangeInfo, tickers, premium index, klines, depth, funding."""

import asyncio
from collections.abc import Awaitable, Callable
from decimal import ROUND_FLOOR, Decimal
from typing import Any, TypeVar

from papertrade.fapi import auth, translate
from papertrade.fapi.dispatch import Call, endpoint
from papertrade.fapi.errors import INTERNAL_RETRY, FapiError
from papertrade.fapi.params import Params
from papertrade.kit.decimals import ZERO, floor_to_step
from papertrade.kit.time import now_ms
from papertrade.market.errors import UpstreamError
from papertrade.market.feed import INTERVALS_MS, MarketFeed
from papertrade.orders.pricing import instrument_of, require_feed
from papertrade.trading.values import Instrument, Kline, Quote

T = TypeVar("T")
LEVEL_NOTIONAL = Decimal(50_000)  # what each synthetic book level shows, in USDT
DEPTH_LIMITS = (5, 10, 20, 50, 100, 500, 1000)


def _feed(call: Call) -> MarketFeed:
    return require_feed(call.ctx.market)


def _instrument(call: Call, name: str = "symbol") -> Instrument:
    symbol = call.params.symbol(name=name)
    assert symbol is not None
    return instrument_of(call.ctx.market, symbol)


def _quote(feed: MarketFeed, symbol: str) -> Quote:
    quote = feed.quote(symbol)
    if quote is None:
        raise FapiError(503, -1001, f"{INTERNAL_RETRY} (no price for {symbol} yet)")
    return quote


async def _upstream(awaitable: Awaitable[T]) -> T:
    try:
        return await awaitable
    except UpstreamError as exc:
        raise FapiError(503, -1001, f"{INTERNAL_RETRY} (market data upstream: {exc})") from exc


async def _each(
    instruments: list[Instrument], fetch: Callable[[Instrument], Awaitable[T]]
) -> list[T]:
    """`fetch` for every instrument, a few at a time (an upstream feed is asked per symbol)."""
    gate = asyncio.Semaphore(8)

    async def one(instrument: Instrument) -> T:
        async with gate:
            return await fetch(instrument)

    return list(await asyncio.gather(*(one(i) for i in instruments)))


def _sorted_instruments(feed: MarketFeed) -> list[Instrument]:
    return [feed.instruments()[s] for s in sorted(feed.instruments())]


def _symbol_weight(with_symbol: int, without: int) -> Callable[[Params], int]:
    return lambda p: with_symbol if p.has("symbol") else without


@endpoint("GET", "/v1/ping")
async def ping(call: Call) -> Any:
    return {}


@endpoint("GET", "/v1/time")
async def server_time(call: Call) -> Any:
    return {"serverTime": now_ms()}


@endpoint("GET", "/v1/exchangeInfo")
async def exchange_info(call: Call) -> Any:
    """The rate limits are the caller's when its request carries an API key (its owner's tier),
    otherwise the service's ceilings (an unsigned request is weighed per IP against those)."""
    tier = await auth.tier_of_key_header(call.ctx, call.request)
    weight, per_10s, per_min = auth.budgets(call.ctx, tier)
    return {
        "timezone": "UTC",
        "serverTime": now_ms(),
        "futuresType": "U_MARGINED",
        "rateLimits": [
            {
                "rateLimitType": "REQUEST_WEIGHT",
                "interval": "MINUTE",
                "intervalNum": 1,
                "limit": weight,
            },
            {
                "rateLimitType": "ORDERS",
                "interval": "MINUTE",
                "intervalNum": 1,
                "limit": per_min,
            },
            {
                "rateLimitType": "ORDERS",
                "interval": "SECOND",
                "intervalNum": 10,
                "limit": per_10s,
            },
        ],
        "exchangeFilters": [],
        "assets": [{"asset": "USDT", "marginAvailable": True, "autoAssetExchange": "-10000"}],
        "symbols": [translate.symbol_wire(i) for i in _sorted_instruments(_feed(call))],
    }


@endpoint("GET", "/v1/ticker/price", "/v2/ticker/price", weight=_symbol_weight(1, 2))
async def ticker_price(call: Call) -> Any:
    feed = _feed(call)
    if call.params.has("symbol"):
        instrument = _instrument(call)
        return translate.price_wire(_quote(feed, instrument.symbol), instrument)
    quotes = feed.quotes()
    return [
        translate.price_wire(quotes[i.symbol], i)
        for i in _sorted_instruments(feed)
        if i.symbol in quotes
    ]


@endpoint("GET", "/v1/ticker/24hr", weight=_symbol_weight(1, 40))
async def ticker_24hr(call: Call) -> Any:
    feed = _feed(call)

    async def one(instrument: Instrument) -> dict[str, Any]:
        stats = await _upstream(feed.ticker_24h(instrument.symbol))
        return translate.ticker_wire(stats, instrument)

    if call.params.has("symbol"):
        return await one(_instrument(call))
    return await _each(_sorted_instruments(feed), one)


@endpoint("GET", "/v1/premiumIndex", weight=_symbol_weight(1, 10))
async def premium_index(call: Call) -> Any:
    feed = _feed(call)
    if call.params.has("symbol"):
        instrument = _instrument(call)
        return translate.premium_wire(_quote(feed, instrument.symbol), instrument)
    quotes = feed.quotes()
    return [
        translate.premium_wire(quotes[i.symbol], i)
        for i in _sorted_instruments(feed)
        if i.symbol in quotes
    ]


def _kline_weight(params: Params) -> int:
    try:
        limit = params.limit(500, 1500)
    except FapiError:
        return 1
    return 1 if limit < 100 else 2 if limit < 500 else 5 if limit <= 1000 else 10


async def _klines(call: Call, symbol_param: str, *, prices_only: bool) -> list[list[Any]]:
    params = call.params
    instrument = _instrument(call, symbol_param)
    interval = params.text("interval", required=True, max_len=3)
    if interval not in INTERVALS_MS:
        raise FapiError(400, -1120, "Invalid interval.")
    start = params.integer("startTime", low=0)
    end = params.integer("endTime", low=0)
    limit = params.limit(500, 1500)
    rows: list[Kline] = await _upstream(
        _feed(call).klines(instrument.symbol, interval, start, end, limit)
    )
    return [translate.kline_row(k, instrument, prices_only=prices_only) for k in rows]


@endpoint("GET", "/v1/klines", weight=_kline_weight)
async def klines(call: Call) -> Any:
    return await _klines(call, "symbol", prices_only=False)


@endpoint("GET", "/v1/markPriceKlines", weight=_kline_weight)
async def mark_price_klines(call: Call) -> Any:
    return await _klines(call, "symbol", prices_only=True)


@endpoint("GET", "/v1/indexPriceKlines", weight=_kline_weight)
async def index_price_klines(call: Call) -> Any:
    return await _klines(call, "pair", prices_only=True)


@endpoint("GET", "/v1/continuousKlines", weight=_kline_weight)
async def continuous_klines(call: Call) -> Any:
    contract = call.params.text("contractType", required=True)
    if contract is None or contract.upper() != "PERPETUAL":
        raise FapiError(400, -1130, "Only contractType PERPETUAL is listed.")
    return await _klines(call, "pair", prices_only=False)


def synthetic_book(
    instrument: Instrument, mark: Decimal, levels: int
) -> tuple[list[list[str]], list[list[str]]]:
    """Bids and asks one tick apart around the mark; the paper market fills at the mark."""
    tick = instrument.tick_size
    floor = (mark / tick).to_integral_value(rounding=ROUND_FLOOR) * tick
    best_bid, best_ask = (mark - tick, mark + tick) if floor == mark else (floor, floor + tick)
    quantity = max(instrument.min_qty, floor_to_step(LEVEL_NOTIONAL / mark, instrument.step_size))
    pp, qp = instrument.price_precision, instrument.quantity_precision
    size = translate.dec(quantity, qp)
    bids = [
        [translate.dec(best_bid - n * tick, pp), size]
        for n in range(levels)
        if best_bid - n * tick > ZERO
    ]
    asks = [[translate.dec(best_ask + n * tick, pp), size] for n in range(levels)]
    return bids, asks


def _depth_weight(params: Params) -> int:
    try:
        limit = params.limit(500, 1000)
    except FapiError:
        return 2
    return 2 if limit <= 50 else 5 if limit <= 100 else 10 if limit <= 500 else 20


@endpoint("GET", "/v1/depth", weight=_depth_weight)
async def depth(call: Call) -> Any:
    instrument = _instrument(call)
    limit = call.params.limit(500, 1000)
    quote = _quote(_feed(call), instrument.symbol)
    bids, asks = synthetic_book(instrument, quote.mark_price, limit)
    return {"lastUpdateId": quote.time, "E": now_ms(), "T": quote.time, "bids": bids, "asks": asks}


def _book_ticker(instrument: Instrument, quote: Quote) -> dict[str, Any]:
    bids, asks = synthetic_book(instrument, quote.mark_price, 1)
    return {
        "symbol": instrument.symbol,
        "bidPrice": bids[0][0] if bids else "0",
        "bidQty": bids[0][1] if bids else "0",
        "askPrice": asks[0][0],
        "askQty": asks[0][1],
        "time": quote.time,
        "lastUpdateId": quote.time,
    }


@endpoint("GET", "/v1/ticker/bookTicker", weight=_symbol_weight(2, 5))
async def book_ticker(call: Call) -> Any:
    feed = _feed(call)
    if call.params.has("symbol"):
        instrument = _instrument(call)
        return _book_ticker(instrument, _quote(feed, instrument.symbol))
    quotes = feed.quotes()
    return [
        _book_ticker(i, quotes[i.symbol]) for i in _sorted_instruments(feed) if i.symbol in quotes
    ]


@endpoint("GET", "/v1/fundingInfo")
async def funding_info(call: Call) -> list[dict[str, Any]]:
    """Binance lists here only the symbols whose funding cap, floor or interval differ from
    the defaults. Every symbol here settles on the same 8-hour grid with no cap of its own, so
    none differs: an empty list, which clients read as "the defaults everywhere"."""
    return []


@endpoint("GET", "/v1/fundingRate")
async def funding_rate(call: Call) -> Any:
    params, feed = call.params, _feed(call)
    start = params.integer("startTime", low=0)
    end = params.integer("endTime", low=0)
    limit = params.limit(100, 1000)

    async def one(instrument: Instrument) -> list[dict[str, Any]]:
        rows = await _upstream(feed.funding_history(instrument.symbol, start, end, limit))
        return [translate.funding_wire(r, instrument) for r in rows]

    if params.has("symbol"):
        return await one(_instrument(call))
    merged = [row for rows in await _each(_sorted_instruments(feed), one) for row in rows]
    merged.sort(key=lambda r: (r["fundingTime"], r["symbol"]))
    return merged[:limit] if start is not None else merged[-limit:]
