"""/v1/market: symbols, quotes, klines, feed status (public)."""

from typing import Annotated

from fastapi import APIRouter, Query

from papertrade.auth.v1 import Ctx
from papertrade.errors import BadRequest, ServiceUnavailable
from papertrade.market.errors import UpstreamError
from papertrade.market.feed import INTERVALS_MS
from papertrade.market.schemas import KlineRead, MarketStatus, QuoteRead, SymbolRead
from papertrade.orders.pricing import instrument_of, require_feed

router = APIRouter(tags=["market"])
Symbol = Annotated[str | None, Query(max_length=30, examples=["BTCUSDT"])]


@router.get("/market/symbols", response_model=list[SymbolRead])
async def symbols(ctx: Ctx) -> list[SymbolRead]:
    """Every tradable USDT perpetual with its filters and leverage brackets."""
    feed = require_feed(ctx.market)
    return [
        SymbolRead.model_validate(instrument)
        for instrument in sorted(feed.instruments().values(), key=lambda i: i.symbol)
    ]


@router.get("/market/quotes", response_model=list[QuoteRead])
async def quotes(ctx: Ctx, symbol: Symbol = None) -> list[QuoteRead]:
    """Mark, last and index price, funding rate and next funding time; one or all symbols."""
    feed = require_feed(ctx.market)
    if symbol:
        instrument = instrument_of(feed, symbol.upper())
        quote = feed.quote(instrument.symbol)
        return [QuoteRead.model_validate(quote)] if quote else []
    return [QuoteRead.model_validate(q) for _, q in sorted(feed.quotes().items())]


@router.get("/market/klines", response_model=list[KlineRead])
async def klines(
    ctx: Ctx,
    symbol: Annotated[str, Query(max_length=30, examples=["BTCUSDT"])],
    interval: Annotated[str, Query(max_length=3, examples=["1m"])] = "1m",
    start: int | None = None,
    end: int | None = None,
    limit: Annotated[int, Query(ge=1, le=1500)] = 500,
) -> list[KlineRead]:
    """Candles, oldest first (`start`/`end` in ms)."""
    if interval not in INTERVALS_MS:
        raise BadRequest(
            f"Unknown interval {interval!r}; use one of {', '.join(INTERVALS_MS)}.",
            code="invalid_interval",
        )
    instrument = instrument_of(ctx.market, symbol.upper())
    try:
        rows = await require_feed(ctx.market).klines(instrument.symbol, interval, start, end, limit)
    except UpstreamError as exc:
        raise ServiceUnavailable(f"Klines are unavailable from the upstream: {exc}") from exc
    return [KlineRead.model_validate(k) for k in rows]


@router.get("/market/status", response_model=MarketStatus)
async def status(ctx: Ctx) -> MarketStatus:
    """Which feed is live (simulated or Binance) and whether prices are fresh."""
    feed = require_feed(ctx.market)
    info = feed.status()
    return MarketStatus(
        source=str(info.get("source", feed.name)),
        simulated=bool(info.get("simulated", feed.name != "binance")),
        connected=bool(info.get("connected", False)),
        stale=bool(info.get("stale", False)),
        last_update=_optional_int(info.get("last_update")),
        detail=str(info.get("detail", "")),
        symbols=len(feed.instruments()),
    )


def _optional_int(value: object) -> int | None:
    return int(value) if isinstance(value, int | float) else None
