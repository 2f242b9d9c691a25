"""The Binance feed against a fake upstream: instruments, live marks, failures and recovery."""

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from decimal import Decimal
from types import SimpleNamespace

import pytest

from papertrade.faults.health import _market as health_market
from papertrade.kit.time import now_ms
from papertrade.market.binance import (
    BinanceFeed,
    binance_reachable,
    rest_base,
    stream_url,
    stream_urls,
)
from papertrade.market.catalogue import DEFAULT_BRACKETS, catalogue
from papertrade.market.errors import UpstreamError
from papertrade.market.feed import StaleMarket, UnknownSymbol
from papertrade.market.guard import fresh_quote
from papertrade.trading.values import Quote
from tests.fakes import FakeBinanceUpstream
from tests.market.support import closed_port_url, eventually


@asynccontextmanager
async def running(fake: FakeBinanceUpstream, **options: object) -> AsyncIterator[BinanceFeed]:
    feed = BinanceFeed(fake.rest_url, fake.ws_url, backoff_initial_s=0.05, **options)  # type: ignore[arg-type]
    await feed.start()
    try:
        await fake.wait_for_connections(1)
        await eventually(lambda: feed.status()["connected"] is True)  # the client side too
        yield feed
    finally:
        await feed.stop()


def collector(feed: BinanceFeed) -> list[Quote]:
    seen: list[Quote] = []

    async def collect(quote: Quote) -> None:
        seen.append(quote)

    feed.on_tick(collect)
    return seen


async def test_loads_instruments_and_initial_marks(binance_upstream: FakeBinanceUpstream) -> None:
    async with running(binance_upstream) as feed:
        instruments = feed.instruments()
        assert sorted(instruments) == ["BTCUSDT", "ETHUSDT", "FOOUSDT"]  # no quarterly, no settling
        btc = instruments["BTCUSDT"]
        assert (btc.tick_size, btc.step_size, btc.min_notional) == (
            Decimal("0.10"),
            Decimal("0.001"),
            Decimal(100),
        )
        assert (btc.max_qty, btc.market_max_qty, btc.price_precision) == (
            Decimal(1000),
            Decimal(120),
            2,
        )
        assert btc.brackets == catalogue()["BTCUSDT"].brackets  # not public: from the catalogue
        assert instruments["FOOUSDT"].brackets == DEFAULT_BRACKETS
        quote = feed.quote("ETHUSDT")
        assert quote is not None and quote.mark_price == binance_upstream.marks["ETHUSDT"]
        assert quote.funding_rate == Decimal("0.00010000")
        status = feed.status()
        assert status["source"] == "binance" and status["simulated"] is False
        assert status["connected"] is True
        assert "!markPrice@arr@1s" in binance_upstream.stream_paths[0]


async def test_pushed_marks_and_last_prices_reach_handlers(
    binance_upstream: FakeBinanceUpstream,
) -> None:
    async with running(binance_upstream) as feed:
        seen = collector(feed)
        assert await binance_upstream.push_mark("BTCUSDT", "61234.5", index=Decimal("61230.1")) == 1
        await eventually(lambda: len(seen) == 1)
        quote = seen[0]
        assert (quote.symbol, quote.mark_price, quote.index_price) == (
            "BTCUSDT",
            Decimal("61234.5"),
            Decimal("61230.1"),
        )
        assert quote.last_price == quote.mark_price  # no trade seen yet
        assert abs(quote.time - now_ms()) < 1_000
        await binance_upstream.push_last("BTCUSDT", "61240.0")
        await eventually(lambda: len(seen) == 2)
        assert seen[1].last_price == Decimal("61240.0") and seen[1].mark_price == Decimal("61234.5")
        await binance_upstream.push_mark("BTCUSDT", "61235")
        await eventually(lambda: len(seen) == 3)
        assert seen[2].last_price == Decimal("61240.0")  # the last trade stays until the next one
        assert feed.quote("BTCUSDT") == seen[2]


async def test_reconnects_after_the_connection_drops(binance_upstream: FakeBinanceUpstream) -> None:
    async with running(binance_upstream) as feed:
        seen = collector(feed)
        await binance_upstream.drop_connections()
        await binance_upstream.wait_for_connections(2)
        await eventually(lambda: feed.status()["connected"] is True)
        await binance_upstream.push_mark("ETHUSDT", "2500.25")
        await eventually(lambda: bool(seen))
        assert seen[-1].mark_price == Decimal("2500.25")
        assert feed.reconnects >= 1


async def test_stale_after_a_stall_and_fresh_again() -> None:
    fake = FakeBinanceUpstream(auto_push_ms=50)
    await fake.start()
    try:
        async with running(fake, stale_after_ms=300) as feed:
            seen = collector(feed)
            await eventually(lambda: len(seen) >= 3)  # the steady stream flows
            latest = seen[-1]
            assert fresh_quote(feed, latest.symbol, 300, latest.time + 300) == latest
            fake.stall()
            await eventually(lambda: feed.status()["stale"] is True, within=15)
            # Stale status means the newest quote is older than the limit: no fills on it.
            with pytest.raises(StaleMarket, match="BTCUSDT"):
                fresh_quote(feed, "BTCUSDT", 300, now_ms())
            assert feed.quote("BTCUSDT") is not None  # still there: callers decide
            during = len(seen)
            fake.stall(False)
            await eventually(lambda: len(seen) > during, within=15)
            assert feed.status()["last_update"] == seen[-1].time
            assert fake.connect_count >= 2  # silence made the client reconnect
    finally:
        await fake.stop()


async def test_garbage_frames_are_survived(binance_upstream: FakeBinanceUpstream) -> None:
    async with running(binance_upstream) as feed:
        seen = collector(feed)
        assert await binance_upstream.send_garbage() == 5
        await binance_upstream.push_mark("BTCUSDT", "50000")
        await eventually(lambda: bool(seen))
        assert seen == [feed.quote("BTCUSDT")] and seen[0].mark_price == Decimal(50000)
        assert feed.bad_frames == 5
        assert binance_upstream.connect_count == 1 and feed.reconnects == 0


async def test_rest_failures_are_clear_errors(binance_upstream: FakeBinanceUpstream) -> None:
    async with running(binance_upstream) as feed:
        binance_upstream.fail("/fapi/v1/klines", 500)
        with pytest.raises(UpstreamError, match=r"klines answered HTTP 500") as caught:
            await feed.klines("BTCUSDT", "1m", limit=10)
        assert caught.value.status == 500 and caught.value.endpoint == "/fapi/v1/klines"
        binance_upstream.heal()
        rows = await feed.klines("BTCUSDT", "1m", limit=10)
        assert len(rows) == 10 and isinstance(rows[0].close, Decimal)
        assert rows[0].close_time == rows[0].open_time + 59_999
        with pytest.raises(UnknownSymbol):
            await feed.klines("NOPEUSDT", "1m")
        with pytest.raises(ValueError, match="interval"):
            await feed.klines("BTCUSDT", "2m")


@pytest.mark.parametrize("reset", [True, False], ids=["rst", "fin"])
async def test_a_kept_alive_connection_closed_under_a_request_is_retried_once(
    binance_upstream: FakeBinanceUpstream, reset: bool
) -> None:
    """Any server closes a kept-alive connection after it stayed idle; a request sent on it at
    that moment meets the close (a reset or the end of the stream, whichever reaches the client
    first). That is no outage: the feed sends the GET once more, on a new connection."""
    async with running(binance_upstream) as feed:  # exchangeInfo and premiumIndex: kept alive
        binance_upstream.cut(reset=reset)
        rows = await feed.klines("BTCUSDT", "1m", limit=10)
        assert len(rows) == 10
        assert binance_upstream.cut_requests == ["/fapi/v1/klines"]  # the first try was cut
        klines = [p for p, _ in binance_upstream.requests if p == "/fapi/v1/klines"]
        assert klines == ["/fapi/v1/klines"] * 2

        # Only once: a second failure in a row is an outage, reported as one.
        binance_upstream.cut(2, reset=reset, kept_alive_only=False)
        expected = "ReadError" if reset else "RemoteProtocolError"
        with pytest.raises(UpstreamError, match=rf"ticker/24hr unreachable: {expected}"):
            await feed.ticker_24h("BTCUSDT")
        assert binance_upstream.cut_requests[1:] == ["/fapi/v1/ticker/24hr"] * 2
        assert (await feed.ticker_24h("BTCUSDT")).last_price == binance_upstream.marks["BTCUSDT"]


async def test_history_endpoints_are_parsed_and_cached(
    binance_upstream: FakeBinanceUpstream,
) -> None:
    async with running(binance_upstream) as feed:

        def calls(path: str) -> int:
            return sum(1 for p, _ in binance_upstream.requests if p == path)

        first = await feed.klines("ETHUSDT", "1h", limit=5)
        again = await feed.klines("ETHUSDT", "1h", limit=5)
        assert first == again and calls("/fapi/v1/klines") == 1
        old_end = now_ms() - 10 * 86_400_000
        await feed.klines("ETHUSDT", "1h", end_ms=old_end, limit=3)
        _, params = binance_upstream.requests[-1]
        assert params == {
            "symbol": "ETHUSDT",
            "interval": "1h",
            "limit": "3",
            "endTime": str(old_end),
        }
        ticker = await feed.ticker_24h("BTCUSDT")
        assert ticker.last_price == binance_upstream.marks["BTCUSDT"] and ticker.count == 500
        assert ticker.extra["weightedAvgPrice"] == str(binance_upstream.marks["BTCUSDT"])
        funding = await feed.funding_history("BTCUSDT", None, None, 3)
        assert len(funding) == 3 and all(r.funding_rate == Decimal("0.0001") for r in funding)
        assert funding[0].funding_time < funding[1].funding_time


async def test_start_fails_loudly_when_exchange_info_fails(
    binance_upstream: FakeBinanceUpstream,
) -> None:
    binance_upstream.fail("/fapi/v1/exchangeInfo", 503)
    feed = BinanceFeed(binance_upstream.rest_url, binance_upstream.ws_url)
    with pytest.raises(UpstreamError, match="exchangeInfo answered HTTP 503"):
        await feed.start()
    assert feed.status()["connected"] is False and feed.status()["stale"] is True


async def test_reachability(binance_upstream: FakeBinanceUpstream) -> None:
    assert await binance_reachable(binance_upstream.rest_url, 3.0) is True
    assert await binance_reachable(binance_upstream.rest_url + "/fapi/v1/", 3.0) is True
    assert await binance_reachable(closed_port_url(), 3.0) is False


def test_url_forms() -> None:
    assert rest_base("https://fapi.binance.com/fapi/v1/") == "https://fapi.binance.com"
    url = stream_url("wss://fstream.binance.com", ["!markPrice@arr@1s", "!miniTicker@arr"])
    # Binance's routed host (2026): market streams under /market, book data under /public.
    assert (
        url == "wss://fstream.binance.com/market/stream?streams=!markPrice@arr@1s/!miniTicker@arr"
    )
    assert stream_url("ws://h/stream", ["a"]) == "ws://h/market/stream?streams=a"  # legacy form
    assert stream_url("ws://h/market", ["a"]) == "ws://h/market/stream?streams=a"
    assert stream_url("ws://h/public/", ["btcusdt@depth"]) == (
        "ws://h/public/stream?streams=btcusdt@depth"
    )
    assert stream_url("ws://h/x?streams=a", ["b"]) == "ws://h/x?streams=a"  # used as given
    assert stream_urls("ws://h", ["!markPrice@arr@1s", "btcusdt@bookTicker", "a@depth5"]) == [
        "ws://h/market/stream?streams=!markPrice@arr@1s",
        "ws://h/public/stream?streams=btcusdt@bookTicker/a@depth5",
    ]


async def test_feed_uses_the_routed_market_path(binance_upstream: FakeBinanceUpstream) -> None:
    """The fake serves only /market and /public (the old root is silent): the feed streams."""
    async with running(binance_upstream) as feed:
        assert binance_upstream.stream_paths == [
            "/market/stream?streams=!markPrice@arr@1s/!miniTicker@arr"
        ]
        assert binance_upstream.root_paths == []
        seen = collector(feed)
        assert await binance_upstream.push_mark("BTCUSDT", "60001.5") == 1
        await eventually(lambda: len(seen) == 1)
        assert feed.status()["silent"] is False


async def test_a_silent_stream_is_alarmed_once_and_reported(
    binance_upstream: FakeBinanceUpstream, caplog: pytest.LogCaptureFixture
) -> None:
    """Connected on the retired root (acknowledged, never fed): alarmed after silent_after_ms,
    logged once, and stale (then reconnected) after stale_after_ms."""
    root = binance_upstream.ws_url + "/stream?streams=!markPrice@arr@1s"
    feed = BinanceFeed(
        binance_upstream.rest_url,
        root,
        silent_after_ms=300,
        stale_after_ms=60_000,
        backoff_initial_s=0.05,
    )
    caplog.set_level("WARNING", logger="papertrade.market.binance")
    await feed.start()
    try:
        await eventually(lambda: feed.status()["silent"] is True, within=15)
        status = feed.status()
        assert status["connected"] is True and "silent" in str(status["detail"])
        assert binance_upstream.root_paths and binance_upstream.connect_count == 0
        await asyncio.sleep(0.5)  # still silent: no second warning
        alarms = [r for r in caplog.records if "SILENT" in r.getMessage()]
        assert len(alarms) == 1 and status["silences"] == 1
        ctx = SimpleNamespace(market=feed)  # what /healthz reads: "silent" (degraded)
        assert health_market(ctx) == "silent"  # type: ignore[arg-type]
    finally:
        await feed.stop()


async def test_silence_then_data_clears_the_alarm() -> None:
    fake = FakeBinanceUpstream()
    await fake.start()
    try:
        async with running(fake, silent_after_ms=200, stale_after_ms=60_000) as feed:
            fake.stall()
            await eventually(lambda: feed.status()["silent"] is True, within=15)
            fake.stall(False)
            await fake.push_mark("BTCUSDT", "60000")
            await eventually(lambda: feed.status()["silent"] is False, within=15)
            assert feed.status()["stale"] is False
    finally:
        await fake.stop()


async def test_history_without_streaming_for_a_scale_out_follower(
    binance_upstream: FakeBinanceUpstream,
) -> None:
    feed = BinanceFeed(binance_upstream.rest_url, binance_upstream.ws_url)
    known = {s: catalogue()[s] for s in ("BTCUSDT", "ETHUSDT")}
    await feed.open_history(known)  # the instruments come from the engine leader
    try:
        rows = await feed.klines("ETHUSDT", "1m", limit=3)
        assert len(rows) == 3 and (await feed.ticker_24h("BTCUSDT")).symbol == "BTCUSDT"
        assert binance_upstream.connect_count == 0  # no stream: only the leader streams
        assert all(p != "/fapi/v1/exchangeInfo" for p, _ in binance_upstream.requests)
        await feed.start()  # taking over later: the same object streams
        await binance_upstream.wait_for_connections(1)
    finally:
        await feed.stop()
