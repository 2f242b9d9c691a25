"""Live market data from Binance's public USDⓈ-M REST API and WebSocket streams."""

import asyncio
import contextlib
import dataclasses
import logging
import random
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from decimal import Decimal
from typing import Any

import httpx
import orjson
from websockets.asyncio.client import connect
from websockets.exceptions import WebSocketException

from papertrade.kit import tls
from papertrade.kit.decimals import D
from papertrade.kit.tasks import cancel_and_wait
from papertrade.kit.time import now_ms
from papertrade.market.binance_parse import (
    PARSE_ERRORS,
    apply_mark_update,
    parse_exchange_info,
    parse_funding,
    parse_kline,
    parse_premium,
    parse_ticker,
)
from papertrade.market.errors import UpstreamError
from papertrade.market.fanout import TickFanout, feed_status
from papertrade.market.feed import TickHandler, UnknownSymbol
from papertrade.market.intervals import check_limit, interval_ms
from papertrade.trading.values import FundingRecord, Instrument, Kline, Quote, Ticker24h

logger = logging.getLogger(__name__)

BINANCE_REST_URL = "https://fapi.binance.com"
BINANCE_WS_URL = "wss://fstream.binance.com"
DEFAULT_STREAMS = ("!markPrice@arr@1s", "!miniTicker@arr")
# Binance's routed stream host (2026): book data under /public, user data under /private, every
# other market stream under /market. The unrouted root acknowledges market-tier streams but never
# sends them, so a feed on it connects and stays silent.
ROUTES = ("public", "market", "private")
PUBLIC_STREAM_MARKERS = ("@depth", "@bookticker", "!bookticker")
DEFAULT_SILENT_AFTER_MS = 5000
_CACHE_SIZE = 256
_HISTORY_TTL_MS = 600_000  # a window that ended in the past does not change
# Failures of the connection itself, which a second try on a new connection may not meet: above
# all a kept-alive connection that the server closed for idleness just as a request went out on
# it (the request meets the server's RST or FIN: ReadError, WriteError, or RemoteProtocolError
# "Server disconnected without sending a response"), which no check before sending can rule out.
# Every REST call here is an idempotent GET, so it is sent once more. Timeouts are not retried:
# that would double a wait that already lasted request_timeout_s.
_RETRIED_ONCE = (httpx.ConnectError, httpx.ReadError, httpx.WriteError, httpx.RemoteProtocolError)


def rest_base(url: str) -> str:
    """The host part of a REST URL given with or without a trailing /fapi or /fapi/v1."""
    url = url.rstrip("/")
    for suffix in ("/fapi/v1", "/fapi"):
        if url.endswith(suffix):
            return url[: -len(suffix)]
    return url


def route_of(stream: str) -> str:
    """The routed category Binance serves `stream` on: "public" for book data, else "market"."""
    name = stream.lower()
    return "public" if any(m in name for m in PUBLIC_STREAM_MARKERS) else "market"


def stream_url(ws_url: str, streams: Sequence[str]) -> str:
    """The combined-stream URL for `streams` on Binance's routed paths.

    `ws_url` is the host (`wss://fstream.binance.com`), the host with a route (`…/market`), or a
    legacy `…/stream`; the route is chosen from the streams (all of one route: see stream_urls).
    A URL that already names `streams=` is used as it is.
    """
    url = ws_url.rstrip("/")
    if "streams=" in url:
        return url
    url = url.removesuffix("/stream").rstrip("/")
    if url.rsplit("/", 1)[-1] not in ROUTES:
        url += "/" + (route_of(streams[0]) if streams else "market")
    return f"{url}/stream?streams={'/'.join(streams)}"


def stream_urls(ws_url: str, streams: Sequence[str]) -> list[str]:
    """One combined-stream URL per route the streams need (one connection each), in order."""
    if "streams=" in ws_url:
        return [ws_url.rstrip("/")]
    grouped: dict[str, list[str]] = {}
    for stream in streams:
        grouped.setdefault(route_of(stream), []).append(stream)
    base = ws_url.rstrip("/").removesuffix("/stream").rstrip("/")
    if base.rsplit("/", 1)[-1] in ROUTES:  # a route given explicitly carries every stream
        return [stream_url(base, streams)]
    return [stream_url(base, group) for group in grouped.values()]


# The `timeout` parameters below are part of the agreed interface, hence the ASYNC109 waivers.
async def probe_binance(rest_url: str, timeout: float) -> str | None:  # noqa: ASYNC109
    """None when GET /fapi/v1/ping answers 200 within `timeout` seconds, else why not."""
    try:
        async with httpx.AsyncClient(timeout=timeout, verify=tls.client_context()) as client:
            async with asyncio.timeout(timeout):
                response = await client.get(f"{rest_base(rest_url)}/fapi/v1/ping")
    except TimeoutError:
        return f"no answer within {timeout:g} s"
    except httpx.HTTPError as exc:
        return f"{type(exc).__name__}: {exc}"
    if response.status_code != 200:
        return f"ping answered HTTP {response.status_code}"
    return None


async def binance_reachable(rest_url: str, timeout: float) -> bool:  # noqa: ASYNC109
    """True when Binance (or whatever serves rest_url) answers /fapi/v1/ping in time."""
    return await probe_binance(rest_url, timeout) is None


class BinanceFeed:
    """Instruments and history over REST, live marks and last prices over one WebSocket."""

    name = "binance"

    def __init__(
        self,
        rest_url: str = BINANCE_REST_URL,
        ws_url: str = BINANCE_WS_URL,
        *,
        stale_after_ms: int = 15_000,
        silent_after_ms: int = DEFAULT_SILENT_AFTER_MS,
        symbols: Iterable[str] | None = None,
        streams: Sequence[str] = DEFAULT_STREAMS,
        request_timeout_s: float = 10.0,
        backoff_initial_s: float = 0.5,
        backoff_max_s: float = 30.0,
        kline_ttl_ms: int = 1000,
        clock: Callable[[], int] = now_ms,
    ) -> None:
        self.rest_url = rest_base(rest_url)
        self.stream_urls = stream_urls(ws_url, streams)
        self.stream_url = " + ".join(self.stream_urls)
        self.stale_after_ms = stale_after_ms
        # Connected but without a usable frame for this long: alarmed (status, /healthz, log).
        self.silent_after_ms = min(silent_after_ms, stale_after_ms)
        self._wanted = None if symbols is None else list(symbols)
        self._timeout = request_timeout_s
        self._backoff = (backoff_initial_s, backoff_max_s)
        self._kline_ttl_ms = kline_ttl_ms
        self._clock = clock
        self._client: httpx.AsyncClient | None = None
        self._instruments: dict[str, Instrument] = {}
        self._quotes: dict[str, Quote] = {}
        self._last_prices: dict[
            str, Decimal
        ] = {}  # from the ticker stream; marks stand in until then
        self._cache: OrderedDict[tuple[object, ...], tuple[int, Any]] = OrderedDict()
        self._fanout = TickFanout()
        self._tasks: list[asyncio.Task[None]] = []
        self._open: set[str] = set()  # stream URLs whose socket is open
        self._silent: set[str] = set()  # open but silent past silent_after_ms
        self.silences = 0  # times a connected stream went silent (each logged once)
        self._last_update: int | None = None
        self._last_error = "not started"
        self.reconnects = 0
        self.bad_frames = 0

    # -- lifecycle ---------------------------------------------------------------------------------

    async def start(self) -> None:
        """Load instruments and initial marks over REST, then open the stream (UpstreamError)."""
        if self._tasks:
            return
        if self._client is None:  # open_history() may have opened it already
            self._client = httpx.AsyncClient(
                base_url=self.rest_url, timeout=self._timeout, verify=tls.client_context()
            )
        try:
            info = await self._get("/fapi/v1/exchangeInfo", {})
            self._instruments = parse_exchange_info(info, self._wanted)
            if not self._instruments:
                raise UpstreamError("exchangeInfo lists no trading USDT perpetual", endpoint="")
            premium = await self._get("/fapi/v1/premiumIndex", {})
            received = self._clock()
            for item in premium if isinstance(premium, list) else ():
                with contextlib.suppress(*PARSE_ERRORS):
                    if item.get("symbol") in self._instruments:
                        self._quotes[item["symbol"]] = parse_premium(item, received)
        except BaseException:
            await self._client.aclose()
            self._client = None
            raise
        self._last_update = self._clock() if self._quotes else None
        self._tasks = [
            asyncio.create_task(self._stream_forever(url), name=f"binance-stream-{n}")
            for n, url in enumerate(self.stream_urls)
        ]

    async def stop(self) -> None:
        """Close the stream and the HTTP client."""
        tasks, self._tasks = self._tasks, []
        if tasks:
            await cancel_and_wait(*tasks)
        if self._client is not None:
            await self._client.aclose()
            self._client = None
        self._open.clear()
        self._silent.clear()

    def on_tick(self, handler: TickHandler) -> None:
        """Register a coroutine called with every new quote."""
        self._fanout.add(handler)

    async def open_history(self, instruments: dict[str, Instrument]) -> None:
        """Serve klines, the 24 h ticker and funding history over REST without streaming.

        For a scale-out follower: the engine leader streams and shares the quotes, the other
        processes still answer history requests themselves. Idempotent; stop() closes it.
        """
        if self._client is None:
            self._client = httpx.AsyncClient(
                base_url=self.rest_url, timeout=self._timeout, verify=tls.client_context()
            )
        if not self._instruments:
            self._instruments = dict(instruments)

    # -- WebSocket ---------------------------------------------------------------------------------

    @property
    def _connected(self) -> bool:
        return bool(self._tasks) and len(self._open) == len(self.stream_urls)

    async def _stream_forever(self, url: str) -> None:
        attempt = 0
        loop = asyncio.get_running_loop()
        while True:
            opened = False
            try:
                async with connect(url, open_timeout=10, close_timeout=1, max_size=2**24) as ws:
                    opened = True
                    self._open.add(url)
                    self._last_error = ""
                    logger.info("market stream connected: %s", url)
                    heard = loop.time()  # the last usable frame (garbage does not count)
                    while True:
                        quiet = loop.time() - heard
                        # Silence is a failure too (half-open TCP, or a route Binance no longer
                        # serves): alarm after silent_after_ms, reconnect after stale_after_ms.
                        limit = self.stale_after_ms if url in self._silent else self.silent_after_ms
                        try:
                            async with asyncio.timeout(max(0.0, limit / 1000 - quiet)):
                                raw = await ws.recv()
                        except TimeoutError:
                            if url in self._silent:
                                raise
                            self._alarm(url, int((loop.time() - heard) * 1000))
                            continue
                        if await self._handle(raw):
                            heard = loop.time()
                            attempt = 0
                            self._recovered(url)
            except asyncio.CancelledError:
                raise
            except TimeoutError:
                self._last_error = (
                    f"no data for {self.stale_after_ms} ms"
                    if opened
                    else "connection attempt timed out"
                )
            except (OSError, WebSocketException) as exc:
                self._last_error = f"{type(exc).__name__}: {exc}"
            except Exception as exc:
                logger.exception("market stream failed unexpectedly")
                self._last_error = f"{type(exc).__name__}: {exc}"
            self._open.discard(url)
            self.reconnects += 1
            initial, cap = self._backoff
            # Full jitter on a capped exponential backoff spreads reconnects after an outage.
            delay = min(cap, initial * 2**attempt) * random.uniform(0.5, 1.0)
            attempt += 1
            logger.warning(
                "market stream lost (%s); reconnecting in %.2f s", self._last_error, delay
            )
            await asyncio.sleep(delay)

    def _alarm(self, url: str, quiet_ms: int) -> None:
        """A connected stream said nothing usable for silent_after_ms: say so, once."""
        self._silent.add(url)
        self.silences += 1
        logger.warning(
            "market stream connected but SILENT for %d ms: %s (is this Binance's routed path? "
            "market streams are served under /market, book data under /public); prices are "
            "going stale, reconnecting after %d ms",
            quiet_ms,
            url,
            self.stale_after_ms,
        )

    def _recovered(self, url: str) -> None:
        if url in self._silent:
            self._silent.discard(url)
            logger.warning("market stream speaks again: %s", url)

    async def _handle(self, raw: str | bytes) -> bool:
        """Apply one frame; True when it carried at least one usable update."""
        try:
            message = orjson.loads(raw)
        except orjson.JSONDecodeError:
            self.bad_frames += 1
            return False
        data = message.get("data", message) if isinstance(message, dict) else None
        items = data if isinstance(data, list) else [data]
        received = self._clock()
        fresh: list[Quote] = []
        for item in items:
            quote = self._apply(item, received)
            if quote is not None:
                fresh.append(quote)
        if not fresh:
            return False
        self._last_update = received
        for quote in fresh:
            self._quotes[quote.symbol] = quote
        await self._fanout.publish(fresh)
        return True

    def _apply(self, item: object, received: int) -> Quote | None:
        if not isinstance(item, dict):
            self.bad_frames += 1
            return None
        kind, symbol = item.get("e"), item.get("s")
        if kind not in ("markPriceUpdate", "24hrMiniTicker", "24hrTicker"):
            self.bad_frames += 1
            return None
        if symbol not in self._instruments:
            return None  # a symbol we do not list (new listing, delivery contract): ignore
        previous = self._quotes.get(symbol)
        try:
            if kind == "markPriceUpdate":
                return apply_mark_update(item, self._last_prices.get(symbol), received)
            self._last_prices[symbol] = D(item["c"])
        except PARSE_ERRORS:
            self.bad_frames += 1
            return None
        if previous is None:
            return None  # a last price alone is no quote: wait for the mark
        return dataclasses.replace(previous, last_price=self._last_prices[symbol], time=received)

    # -- REST --------------------------------------------------------------------------------------

    async def _get(self, path: str, params: dict[str, Any]) -> Any:
        if self._client is None:
            raise UpstreamError("the Binance feed is not started", endpoint=path)
        try:
            try:
                response = await self._client.get(path, params=params)
            except _RETRIED_ONCE as exc:  # the broken connection has left the pool
                logger.info("Binance %s: %s: %s; trying once more", path, type(exc).__name__, exc)
                response = await self._client.get(path, params=params)
        except httpx.HTTPError as exc:
            raise UpstreamError(
                f"Binance {path} unreachable: {type(exc).__name__}: {exc}", endpoint=path
            ) from exc
        if response.status_code != 200:
            raise UpstreamError(
                f"Binance {path} answered HTTP {response.status_code}: {response.text[:200]}",
                status=response.status_code,
                endpoint=path,
            )
        try:
            return orjson.loads(response.content)
        except orjson.JSONDecodeError as exc:
            raise UpstreamError(f"Binance {path} answered non-JSON", endpoint=path) from exc

    async def _cached(
        self, key: tuple[object, ...], ttl_ms: int, path: str, params: dict[str, Any]
    ) -> Any:
        now = self._clock()
        hit = self._cache.get(key)
        if hit is not None and hit[0] > now:
            self._cache.move_to_end(key)
            return hit[1]
        value = await self._get(path, params)
        self._cache[key] = (now + ttl_ms, value)
        if len(self._cache) > _CACHE_SIZE:
            self._cache.popitem(last=False)
        return value

    def _instrument(self, symbol: str) -> Instrument:
        found = self._instruments.get(symbol)
        if found is None:
            raise UnknownSymbol(symbol)
        return found

    async def klines(
        self,
        symbol: str,
        interval: str,
        start_ms: int | None = None,
        end_ms: int | None = None,
        limit: int = 500,
    ) -> list[Kline]:
        """Candles from /fapi/v1/klines, cached briefly (UpstreamError when Binance fails)."""
        self._instrument(symbol)
        length = interval_ms(interval)
        params: dict[str, Any] = {
            "symbol": symbol,
            "interval": interval,
            "limit": check_limit(limit),
        }
        if start_ms is not None:
            params["startTime"] = start_ms
        if end_ms is not None:
            params["endTime"] = end_ms
        past = end_ms is not None and end_ms < self._clock() - length
        ttl = _HISTORY_TTL_MS if past else self._kline_ttl_ms
        key = ("klines", symbol, interval, start_ms, end_ms, limit)
        rows = await self._cached(key, ttl, "/fapi/v1/klines", params)
        try:
            return [parse_kline(row) for row in rows]
        except PARSE_ERRORS as exc:
            raise UpstreamError(
                "Binance klines answered malformed rows", endpoint="/fapi/v1/klines"
            ) from exc

    async def ticker_24h(self, symbol: str) -> Ticker24h:
        """Rolling 24 h statistics from /fapi/v1/ticker/24hr (cached for a second)."""
        self._instrument(symbol)
        obj = await self._cached(
            ("ticker", symbol), 1000, "/fapi/v1/ticker/24hr", {"symbol": symbol}
        )
        try:
            return parse_ticker(obj)
        except PARSE_ERRORS as exc:
            raise UpstreamError("Binance ticker/24hr answered malformed data") from exc

    async def funding_history(
        self, symbol: str, start_ms: int | None, end_ms: int | None, limit: int
    ) -> list[FundingRecord]:
        """Settled funding events from /fapi/v1/fundingRate, oldest first."""
        self._instrument(symbol)
        params: dict[str, Any] = {"symbol": symbol, "limit": limit}
        if start_ms is not None:
            params["startTime"] = start_ms
        if end_ms is not None:
            params["endTime"] = end_ms
        key = ("funding", symbol, start_ms, end_ms, limit)
        rows = await self._cached(key, 5000, "/fapi/v1/fundingRate", params)
        try:
            return [parse_funding(row) for row in rows]
        except PARSE_ERRORS as exc:
            raise UpstreamError("Binance fundingRate answered malformed rows") from exc

    # -- state -------------------------------------------------------------------------------------

    def instruments(self) -> dict[str, Instrument]:
        """Instruments from exchangeInfo (brackets from the catalogue)."""
        return dict(self._instruments)

    def quote(self, symbol: str) -> Quote | None:
        """The last quote received, however old (see status() and guard.fresh_quote)."""
        return self._quotes.get(symbol)

    def quotes(self) -> dict[str, Quote]:
        """The last quote of every symbol."""
        return dict(self._quotes)

    def status(self) -> dict[str, object]:
        """Connection state; stale when nothing arrived for more than stale_after_ms."""
        now = self._clock()
        quiet = None if self._last_update is None else now - self._last_update
        stale = quiet is None or quiet > self.stale_after_ms
        silent = bool(self._silent)
        if silent:
            state = f"connected but silent ({', '.join(sorted(self._silent))})"
        elif self._connected:
            state = "connected"
        else:
            state = f"disconnected ({self._last_error})"
        age = "no data yet" if quiet is None else f"last update {quiet} ms ago"
        return feed_status(
            "binance",
            simulated=False,
            connected=self._connected,
            last_update=self._last_update,
            stale=stale,
            silent=silent,
            detail=f"{self.stream_url} {state}, {age}, {len(self._instruments)} symbols",
            reconnects=self.reconnects,
            bad_frames=self.bad_frames,
            silences=self.silences,
        )
