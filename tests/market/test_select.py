"""Choosing the feed at start-up, the status() shape every feed shares, and the fill guard."""

import logging

import pytest

from papertrade.market.binance import BinanceFeed
from papertrade.market.feed import MarketFeed, StaleMarket, UnknownSymbol
from papertrade.market.guard import fresh_quote
from papertrade.market.replay import SAMPLE_PATH, ReplayFeed
from papertrade.market.select import build_feed
from papertrade.market.sim import SimFeed
from tests.fakes import FakeBinanceUpstream
from tests.market.support import closed_port_url, eventually

STATUS_KEYS = {"source", "simulated", "connected", "last_update", "stale", "detail"}


async def test_auto_falls_back_to_the_simulation(caplog: pytest.LogCaptureFixture) -> None:
    url = closed_port_url()
    with caplog.at_level(logging.WARNING, logger="papertrade.market"):
        feed = await build_feed("auto", binance_rest_url=url, sim_seed=5, sim_tick_ms=100)
    assert isinstance(feed, SimFeed) and feed.seed == 5 and feed.tick_ms == 100
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    assert "SIMULATED feed is live" in warnings[0] and url in warnings[0]


async def test_auto_picks_binance_when_it_answers(binance_upstream: FakeBinanceUpstream) -> None:
    feed = await build_feed(
        "auto",
        binance_rest_url=binance_upstream.rest_url,
        binance_ws_url=binance_upstream.ws_url,
        stale_after_ms=1234,
    )
    assert isinstance(feed, BinanceFeed)
    assert feed.rest_url == binance_upstream.rest_url and feed.stale_after_ms == 1234


async def test_explicit_sources() -> None:
    assert isinstance(await build_feed("sim"), SimFeed)
    replay = await build_feed("replay", replay_speed=30)
    assert isinstance(replay, ReplayFeed) and replay.path == SAMPLE_PATH and replay.speed == 30
    binance = await build_feed("Binance", binance_rest_url=closed_port_url())
    assert isinstance(binance, BinanceFeed)  # forced: no probe, start() will report failures
    with pytest.raises(ValueError, match="unknown market source"):
        await build_feed("bloomberg")


async def test_every_feed_reports_the_same_status_shape(
    binance_upstream: FakeBinanceUpstream,
) -> None:
    feeds: list[MarketFeed] = [
        SimFeed(tick_ms=50, symbols=["BTCUSDT"]),
        ReplayFeed(SAMPLE_PATH, speed=10),
        BinanceFeed(binance_upstream.rest_url, binance_upstream.ws_url),
    ]
    for feed in feeds:
        await feed.start()
    try:
        await binance_upstream.wait_for_connections(1)
        await eventually(lambda: feeds[2].status()["connected"] is True)
        for feed in feeds:
            status = feed.status()
            assert set(status) >= STATUS_KEYS, feed.name
            assert status["source"] == feed.name
            assert status["simulated"] is (feed.name != "binance")
            assert status["connected"] is True and status["stale"] is False
            assert isinstance(status["last_update"], int) and isinstance(status["detail"], str)
    finally:
        for feed in feeds:
            await feed.stop()


async def test_fresh_quote_guards_the_order_path() -> None:
    now = 1_780_000_000_000
    feed = SimFeed(clock=lambda: now, symbols=["BTCUSDT"])
    with pytest.raises(StaleMarket, match="no price"):
        fresh_quote(feed, "BTCUSDT", 5_000, now)
    quote = await feed.set_price("BTCUSDT", "60000")
    assert fresh_quote(feed, "BTCUSDT", 5_000, now + 5_000) == quote
    with pytest.raises(StaleMarket, match="5001 ms old"):
        fresh_quote(feed, "BTCUSDT", 5_000, now + 5_001)
    with pytest.raises(UnknownSymbol):
        fresh_quote(feed, "ETHUSDT", 5_000, now)
