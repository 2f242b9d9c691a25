"""Market channels: mark price on every tick, 24 h ticker and klines polled once a second.

Each process publishes the ticks its own MarketFeed delivers to the sockets it holds (in scale-out
mode with Redis that feed relays the engine leader's quotes; the WebSocket layer does not care).
Nothing is computed for a symbol nobody subscribed to.
"""

import asyncio
import logging
from decimal import Decimal
from typing import Any

from papertrade.kit.tasks import cancel_and_wait
from papertrade.kit.time import now_ms
from papertrade.market.feed import MarketFeed
from papertrade.trading.values import Kline, Quote
from papertrade.ws.client import Client
from papertrade.ws.frames import dumps
from papertrade.ws.hub import Hub

log = logging.getLogger("papertrade.ws")
ALL_MARKS = "mark_price"


def mark_message(quote: Quote) -> bytes:
    return dumps(
        {
            "channel": f"mark_price:{quote.symbol}",
            "type": "mark_price",
            "time": quote.time,
            "data": {
                "symbol": quote.symbol,
                "mark_price": float(quote.mark_price),
                "index_price": float(quote.index_price),
                "last_price": float(quote.last_price),
                "funding_rate": float(quote.funding_rate),
                "next_funding_time": quote.next_funding_time,
                "time": quote.time,
            },
        }
    )


def kline_message(symbol: str, interval: str, k: Kline, closed: bool) -> bytes:
    return dumps(
        {
            "channel": f"kline:{symbol}:{interval}",
            "type": "kline",
            "time": now_ms(),
            "data": {
                "symbol": symbol,
                "interval": interval,
                "open_time": k.open_time,
                "close_time": k.close_time,
                "open": float(k.open),
                "high": float(k.high),
                "low": float(k.low),
                "close": float(k.close),
                "volume": float(k.volume),
                "quote_volume": float(k.quote_volume),
                "closed": closed,
            },
        }
    )


class MarketPublisher:
    """Feeds the market channels of one hub from one market feed."""

    def __init__(self, hub: Hub, feed: MarketFeed, poll_s: float = 1.0):
        self.hub = hub
        self.feed = feed
        self.poll_s = poll_s
        self._running = False
        self._tasks: list[asyncio.Task[None]] = []
        self._kline_open: dict[str, int] = {}  # topic → open time of the candle last sent

    def start(self) -> None:
        self._running = True
        self.feed.on_tick(self.on_tick)
        self._tasks = [asyncio.create_task(self._poll_forever(), name="ws-market-poll")]

    async def stop(self) -> None:
        self._running = False
        await cancel_and_wait(*self._tasks)
        self._tasks.clear()

    async def on_tick(self, quote: Quote) -> None:
        """Publish a mark price to `mark_price:<SYMBOL>` and `mark_price` subscribers."""
        if not self._running:
            return
        topics = self.hub.topics
        specific = topics.get("mark_price:" + quote.symbol)
        every = topics.get(ALL_MARKS)
        if not specific and not every:
            return
        targets: set[Client] = specific | every if specific and every else specific or every  # type: ignore[assignment]
        self.hub.publish_to(targets, mark_message(quote))

    async def _poll_forever(self) -> None:
        while True:
            await asyncio.sleep(self.poll_s)
            try:
                await self.poll()
            except Exception:
                log.exception("market channel poll failed")

    async def poll(self) -> None:
        """One round of ticker and kline messages for the subscribed symbols."""
        for topic in [t for t in self.hub.topics if t.startswith(("ticker:", "kline:"))]:
            try:
                if topic.startswith("ticker:"):
                    await self._ticker(topic)
                else:
                    await self._kline(topic)
            except Exception as exc:  # an upstream hiccup skips one round for one topic
                log.debug("market channel %s skipped: %s", topic, exc)

    async def _ticker(self, topic: str) -> None:
        symbol = topic.partition(":")[2]
        t = await self.feed.ticker_24h(symbol)
        quote = self.feed.quote(symbol)
        change = t.last_price - t.open_price
        percent = (change * 100 / t.open_price) if t.open_price else Decimal(0)
        data: dict[str, Any] = {
            "symbol": symbol,
            "last_price": float(t.last_price),
            "mark_price": float(quote.mark_price) if quote else None,
            "open_price": float(t.open_price),
            "high_price": float(t.high_price),
            "low_price": float(t.low_price),
            "volume": float(t.volume),
            "quote_volume": float(t.quote_volume),
            "price_change": float(change),
            "price_change_percent": float(round(percent, 3)),
            "open_time": t.open_time,
            "close_time": t.close_time,
        }
        message = {"channel": topic, "type": "ticker", "time": now_ms(), "data": data}
        self.hub.publish(topic, dumps(message))

    async def _kline(self, topic: str) -> None:
        _, symbol, interval = topic.split(":")
        rows = await self.feed.klines(symbol, interval, limit=2)
        if not rows:
            return
        current = rows[-1]
        sent = self._kline_open.get(topic)
        if sent is not None and sent != current.open_time and rows[0].open_time == sent:
            # The candle we were updating has closed: send its final state once.
            self.hub.publish(topic, kline_message(symbol, interval, rows[0], True))
        self._kline_open[topic] = current.open_time
        self.hub.publish(topic, kline_message(symbol, interval, current, False))
        for stale in [t for t in self._kline_open if t not in self.hub.topics]:
            del self._kline_open[stale]
