"""Binance market streams from the service's own feed: names, payloads, the depth chain.

Stream names are kept lower case (`btcusdt@markprice@1s`); what a client subscribed is echoed as
sent by LIST_SUBSCRIPTIONS, and a combined frame's `stream` is Binance's spelling
(`btcusdt@markPrice@1s`).
Unknown names are accepted and stay silent (as Binance). The synthetic book is the one
GET /fapi/v1/depth serves, so `@depth` diffs chain on the quote clock: `u` = the quote's time
(the REST `lastUpdateId`), `pu` = the previous quote's time, `U` = `pu + 1`.
"""

import functools
import re
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from papertrade.fapi import translate
from papertrade.fapi.endpoints.market import synthetic_book
from papertrade.kit.time import now_ms
from papertrade.market.feed import INTERVALS_MS, MarketFeed
from papertrade.trading.values import Instrument, Quote

DEPTH_LEVELS = 1000  # the diff stream covers what GET /fapi/v1/depth?limit=1000 shows
STREAM_RE = re.compile(
    r"^(?:(?P<all>!(?:markprice@arr(?:@1s)?|miniticker@arr|ticker@arr|bookticker))"
    r"|(?P<symbol>[a-z0-9]{1,30})@(?P<kind>markprice(?:@1s)?|miniticker|ticker|bookticker"
    r"|kline_(?P<interval>[0-9]{1,2}[mhdwM])|depth(?P<levels>5|10|20)?(?:@(?:100|250|500)ms)?"
    r"|aggtrade|trade|forceorder))$"
)


@dataclass(frozen=True, slots=True)
class Stream:
    """A parsed stream name: `kind` is markprice, miniticker, ticker, bookticker, kline, depth,
    depthN or silent (accepted, nothing to send: trades, liquidations)."""

    name: str
    kind: str
    symbol: str | None  # upper case; None for the all-market (`!…`) streams
    interval: str | None = None
    levels: int | None = None


CAMEL = {
    "markprice": "markPrice",
    "miniticker": "miniTicker",
    "bookticker": "bookTicker",
    "aggtrade": "aggTrade",
    "forceorder": "forceOrder",
}


@functools.lru_cache(maxsize=4096)
def label(name: str) -> str:
    """A lower-case stream name in Binance's spelling, as the `stream` of a combined frame
    (`btcusdt@markprice@1s` → `btcusdt@markPrice@1s`, `!miniticker@arr` → `!miniTicker@arr`)."""
    parts = name.split("@")
    for n, part in enumerate(parts):
        if n == 0 and not part.startswith("!"):
            continue  # the symbol
        bang = "!" if part.startswith("!") else ""
        parts[n] = bang + CAMEL.get(part.removeprefix("!"), part.removeprefix("!"))
    return "@".join(parts)


def parse_stream(name: str) -> Stream | None:
    """The stream `name` (as sent) asks for, or None for an unknown name (silent on Binance)."""
    low = name.lower()
    interval_part = None
    match = STREAM_RE.match(low)
    if match is None:
        # Intervals are case sensitive (1M month vs 1m minute): try the name as written.
        match = STREAM_RE.match(name[: name.find("@") + 1].lower() + name[name.find("@") + 1 :])
        if match is None or not match.group("interval"):
            return None
    if match.group("all"):
        kind = match.group("all")[1:].split("@")[0]
        return Stream(low, kind, None)
    symbol = match.group("symbol").upper()
    kind = match.group("kind")
    if match.group("interval"):
        interval_part = match.group("interval")
        if interval_part not in INTERVALS_MS:
            return None
        return Stream(low, "kline", symbol, interval_part)
    if kind.startswith("depth"):
        levels = match.group("levels")
        return Stream(low, "depthN" if levels else "depth", symbol, levels=int(levels or 0) or None)
    if kind in ("aggtrade", "trade", "forceorder"):
        return Stream(low, "silent", symbol)
    return Stream(low, kind.split("@")[0], symbol)


def mark_payload(q: Quote, instrument: Instrument) -> dict[str, Any]:
    pp = instrument.price_precision
    return {
        "e": "markPriceUpdate",
        "E": now_ms(),
        "s": q.symbol,
        "p": translate.dec(q.mark_price, pp),
        "i": translate.dec(q.index_price, pp),
        "P": translate.dec(q.index_price, pp),
        "r": translate.dec(q.funding_rate, 8),
        "T": q.next_funding_time,
    }


def book_ticker_payload(q: Quote, instrument: Instrument) -> dict[str, Any]:
    bids, asks = synthetic_book(instrument, q.mark_price, 1)
    return {
        "e": "bookTicker",
        "u": q.time,
        "E": now_ms(),
        "T": q.time,
        "s": q.symbol,
        "b": bids[0][0] if bids else "0",
        "B": bids[0][1] if bids else "0",
        "a": asks[0][0],
        "A": asks[0][1],
    }


async def ticker_payload(feed: MarketFeed, symbol: str, mini: bool) -> dict[str, Any]:
    instrument = feed.instruments()[symbol]
    t = await feed.ticker_24h(symbol)
    row = translate.ticker_wire(t, instrument)
    body: dict[str, Any] = {
        "e": "24hrMiniTicker" if mini else "24hrTicker",
        "E": now_ms(),
        "s": symbol,
    }
    if not mini:
        body |= {
            "p": row["priceChange"],
            "P": row["priceChangePercent"],
            "w": row["weightedAvgPrice"],
        }
    body |= {"c": row["lastPrice"]}
    if not mini:
        body["Q"] = row["lastQty"]
    body |= {
        "o": row["openPrice"],
        "h": row["highPrice"],
        "l": row["lowPrice"],
        "v": row["volume"],
        "q": row["quoteVolume"],
    }
    if not mini:
        body |= {
            "O": row["openTime"],
            "C": row["closeTime"],
            "F": 0,
            "L": row["lastId"],
            "n": row["count"],
        }
    return body


async def kline_payload(feed: MarketFeed, symbol: str, interval: str) -> dict[str, Any] | None:
    instrument = feed.instruments()[symbol]
    rows = await feed.klines(symbol, interval, limit=1)
    if not rows:
        return None
    k = rows[-1]
    row = translate.kline_row(k, instrument)
    return {
        "e": "kline",
        "E": now_ms(),
        "s": symbol,
        "k": {
            "t": k.open_time,
            "T": k.close_time,
            "s": symbol,
            "i": interval,
            "f": 0,
            "L": max(0, k.trades - 1),
            "o": row[1],
            "c": row[4],
            "h": row[2],
            "l": row[3],
            "v": row[5],
            "n": k.trades,
            "x": k.close_time < now_ms(),
            "q": row[7],
            "V": row[9],
            "Q": row[10],
            "B": "0",
        },
    }


class DepthChain:
    """Per symbol: the last synthetic book sent and its update id (the quote's time)."""

    def __init__(self) -> None:
        self._last: dict[str, tuple[int, dict[str, str], dict[str, str]]] = {}

    def forget(self, symbol: str) -> None:
        self._last.pop(symbol, None)

    def start(self, q: Quote, instrument: Instrument) -> None:
        """Begin the symbol's chain at this quote (the book GET /fapi/v1/depth serves now), so
        the first diff sent starts right after any snapshot taken once subscribed."""
        if q.symbol not in self._last:
            self.diff(q, instrument)

    def diff(self, q: Quote, instrument: Instrument) -> dict[str, Any] | None:
        """The depthUpdate from the previous book to this quote's (None for the first or a
        quote that is not newer)."""
        bids, asks = synthetic_book(instrument, q.mark_price, DEPTH_LEVELS)
        book_b: dict[str, str] = {level[0]: level[1] for level in bids}
        book_a: dict[str, str] = {level[0]: level[1] for level in asks}
        previous = self._last.get(q.symbol)
        if previous is not None and q.time <= previous[0]:
            return None
        self._last[q.symbol] = (q.time, book_b, book_a)
        if previous is None:
            return None
        last_time, old_b, old_a = previous

        def changes(old: dict[str, str], new: dict[str, str], reverse: bool) -> list[list[str]]:
            out = [[p, "0"] for p in old if p not in new]
            out += [[p, s] for p, s in new.items() if old.get(p) != s]
            return sorted(out, key=lambda level: Decimal(level[0]), reverse=reverse)

        return {
            "e": "depthUpdate",
            "E": now_ms(),
            "T": q.time,
            "s": q.symbol,
            "U": last_time + 1,
            "u": q.time,
            "pu": last_time,
            "b": changes(old_b, book_b, True),
            "a": changes(old_a, book_a, False),
        }


def partial_depth(q: Quote, instrument: Instrument, levels: int, previous: int) -> dict[str, Any]:
    bids, asks = synthetic_book(instrument, q.mark_price, levels)
    return {
        "e": "depthUpdate",
        "E": now_ms(),
        "T": q.time,
        "s": q.symbol,
        "U": previous + 1,
        "u": q.time,
        "pu": previous,
        "b": bids,
        "a": asks,
    }
