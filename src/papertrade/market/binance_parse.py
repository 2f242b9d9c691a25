"""Binance USDⓈ-M public market payloads turned into the shared value types."""

import logging
from collections.abc import Iterable, Mapping
from decimal import Decimal, InvalidOperation
from typing import Any

from papertrade.kit.decimals import D
from papertrade.market.catalogue import brackets_for
from papertrade.trading.values import FundingRecord, Instrument, Kline, Quote, Ticker24h

logger = logging.getLogger(__name__)

# Anything malformed in one row raises one of these; callers skip the row or fail the request.
PARSE_ERRORS = (KeyError, IndexError, TypeError, ValueError, InvalidOperation)
_TICKER_EXTRAS = ("priceChange", "priceChangePercent", "weightedAvgPrice", "lastQty", "firstId")


def _filters(entry: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    return {f["filterType"]: f for f in entry.get("filters") or () if "filterType" in f}


def parse_instrument(entry: Mapping[str, Any]) -> Instrument | None:
    """An Instrument for a trading USDT-margined perpetual; None for anything else."""
    if (
        entry.get("contractType") != "PERPETUAL"
        or entry.get("status") != "TRADING"
        or entry.get("quoteAsset") != "USDT"
        or entry.get("marginAsset", "USDT") != "USDT"
    ):
        return None
    symbol = str(entry["symbol"])
    filters = _filters(entry)
    price, lot = filters["PRICE_FILTER"], filters["LOT_SIZE"]
    market = filters.get("MARKET_LOT_SIZE", lot)
    notional = filters.get("MIN_NOTIONAL", {})
    return Instrument(
        symbol=symbol,
        base_asset=str(entry["baseAsset"]),
        quote_asset="USDT",
        tick_size=D(price["tickSize"]),
        step_size=D(lot["stepSize"]),
        min_qty=D(lot["minQty"]),
        max_qty=D(lot["maxQty"]),
        market_max_qty=D(market["maxQty"]),
        min_notional=D(notional.get("notional", notional.get("minNotional", "5"))),
        min_price=D(price["minPrice"]),
        max_price=D(price["maxPrice"]),
        price_precision=int(entry["pricePrecision"]),
        quantity_precision=int(entry["quantityPrecision"]),
        # Brackets are behind a signed endpoint on Binance, so they come from the catalogue.
        brackets=brackets_for(symbol),
        onboard_date=int(entry.get("onboardDate", 1569398400000)),
    )


def parse_exchange_info(
    payload: Mapping[str, Any], wanted: Iterable[str] | None = None
) -> dict[str, Instrument]:
    """Instruments of every trading USDT perpetual (optionally only the `wanted` symbols)."""
    keep = None if wanted is None else set(wanted)
    found: dict[str, Instrument] = {}
    for entry in payload.get("symbols") or ():
        if keep is not None and entry.get("symbol") not in keep:
            continue
        try:
            instrument = parse_instrument(entry)
        except PARSE_ERRORS:
            logger.warning("skipping malformed exchangeInfo entry %r", entry.get("symbol"))
            continue
        if instrument is not None:
            found[instrument.symbol] = instrument
    return found


def parse_kline(row: list[Any]) -> Kline:
    """One row of /fapi/v1/klines (a 12-element array)."""
    return Kline(
        open_time=int(row[0]),
        open=D(row[1]),
        high=D(row[2]),
        low=D(row[3]),
        close=D(row[4]),
        volume=D(row[5]),
        close_time=int(row[6]),
        quote_volume=D(row[7]),
        trades=int(row[8]),
        taker_buy_volume=D(row[9]),
        taker_buy_quote_volume=D(row[10]),
    )


def parse_ticker(obj: Mapping[str, Any]) -> Ticker24h:
    """A /fapi/v1/ticker/24hr object."""
    return Ticker24h(
        symbol=str(obj["symbol"]),
        open_price=D(obj["openPrice"]),
        high_price=D(obj["highPrice"]),
        low_price=D(obj["lowPrice"]),
        last_price=D(obj["lastPrice"]),
        volume=D(obj["volume"]),
        quote_volume=D(obj["quoteVolume"]),
        open_time=int(obj["openTime"]),
        close_time=int(obj["closeTime"]),
        count=int(obj.get("count", 0)),
        extra={k: str(obj[k]) for k in (*_TICKER_EXTRAS, "lastId") if k in obj},
    )


def parse_funding(obj: Mapping[str, Any]) -> FundingRecord:
    """A /fapi/v1/fundingRate row (old rows carry an empty markPrice)."""
    return FundingRecord(
        symbol=str(obj["symbol"]),
        funding_rate=D(obj["fundingRate"]),
        funding_time=int(obj["fundingTime"]),
        mark_price=D(obj.get("markPrice") or "0"),
    )


def parse_premium(obj: Mapping[str, Any], received_ms: int) -> Quote:
    """A /fapi/v1/premiumIndex object; the mark stands in for the last price until a trade."""
    mark = D(obj["markPrice"])
    return Quote(
        symbol=str(obj["symbol"]),
        mark_price=mark,
        last_price=mark,
        index_price=D(obj["indexPrice"]),
        funding_rate=D(obj["lastFundingRate"] or "0"),
        next_funding_time=int(obj["nextFundingTime"]),
        time=received_ms,
    )


def apply_mark_update(
    event: Mapping[str, Any], last_price: Decimal | None, received_ms: int
) -> Quote:
    """A quote from one markPriceUpdate event ({"s","p","i","r","T",...})."""
    mark = D(event["p"])
    return Quote(
        symbol=str(event["s"]),
        mark_price=mark,
        last_price=last_price if last_price is not None else mark,
        index_price=D(event["i"]),
        funding_rate=D(event["r"] or "0"),
        next_funding_time=int(event["T"]),
        time=received_ms,
    )
