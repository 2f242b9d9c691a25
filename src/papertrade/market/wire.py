"""Quotes and instruments as JSON for Redis (decimals as strings, so nothing is rounded)."""

from decimal import Decimal
from typing import Any

import orjson

from papertrade.trading.values import Bracket, Instrument, Quote

_INSTRUMENT_DECIMALS = (
    "tick_size",
    "step_size",
    "min_qty",
    "max_qty",
    "market_max_qty",
    "min_notional",
    "min_price",
    "max_price",
)


def quote_row(quote: Quote) -> list[object]:
    """[symbol, mark, last, index, funding rate, next funding time, time]."""
    return [
        quote.symbol,
        str(quote.mark_price),
        str(quote.last_price),
        str(quote.index_price),
        str(quote.funding_rate),
        quote.next_funding_time,
        quote.time,
    ]


def quote_from_row(row: list[Any]) -> Quote:
    symbol, mark, last, index, rate, next_funding, time = row
    return Quote(
        symbol=str(symbol),
        mark_price=Decimal(mark),
        last_price=Decimal(last),
        index_price=Decimal(index),
        funding_rate=Decimal(rate),
        next_funding_time=int(next_funding),
        time=int(time),
    )


def encode_quote(quote: Quote) -> bytes:
    return orjson.dumps(quote_row(quote))


def decode_quote(raw: bytes | str) -> Quote:
    """A quote from encode_quote (ValueError, TypeError or KeyError when malformed)."""
    row = orjson.loads(raw)
    if not isinstance(row, list):
        raise ValueError("a quote is a JSON array")
    return quote_from_row(row)


def _bracket(b: Bracket) -> list[object]:
    return [
        b.bracket,
        b.initial_leverage,
        str(b.notional_floor),
        str(b.notional_cap),
        str(b.maint_margin_ratio),
        str(b.cum),
    ]


def encode_instruments(instruments: dict[str, Instrument]) -> bytes:
    """The catalogue in symbol order (equal catalogues encode to equal bytes)."""
    rows = []
    for symbol in sorted(instruments):
        i = instruments[symbol]
        row: dict[str, object] = {
            "symbol": i.symbol,
            "base_asset": i.base_asset,
            "quote_asset": i.quote_asset,
            "price_precision": i.price_precision,
            "quantity_precision": i.quantity_precision,
            "onboard_date": i.onboard_date,
            "brackets": [_bracket(b) for b in i.brackets],
        }
        row.update((name, str(getattr(i, name))) for name in _INSTRUMENT_DECIMALS)
        rows.append(row)
    return orjson.dumps(rows)


def decode_instruments(raw: bytes | str) -> dict[str, Instrument]:
    """The catalogue from encode_instruments (ValueError, TypeError or KeyError when malformed)."""
    found: dict[str, Instrument] = {}
    for row in orjson.loads(raw):
        brackets = tuple(
            Bracket(int(n), int(lev), Decimal(floor), Decimal(cap), Decimal(ratio), Decimal(cum))
            for n, lev, floor, cap, ratio, cum in row["brackets"]
        )
        instrument = Instrument(
            symbol=str(row["symbol"]),
            base_asset=str(row["base_asset"]),
            quote_asset=str(row["quote_asset"]),
            price_precision=int(row["price_precision"]),
            quantity_precision=int(row["quantity_precision"]),
            onboard_date=int(row["onboard_date"]),
            brackets=brackets,
            **{name: Decimal(row[name]) for name in _INSTRUMENT_DECIMALS},
        )
        found[instrument.symbol] = instrument
    return found
