"""Choosing the market feed at start-up: Binance, the simulation, a replay, or automatic."""

import logging
from pathlib import Path

from papertrade.market.binance import BINANCE_REST_URL, BINANCE_WS_URL, BinanceFeed, probe_binance
from papertrade.market.feed import MarketFeed
from papertrade.market.replay import SAMPLE_PATH, ReplayFeed
from papertrade.market.sim import SimFeed

logger = logging.getLogger(__name__)

SOURCES = ("auto", "binance", "sim", "replay")


async def build_feed(
    source: str,
    *,
    binance_rest_url: str = BINANCE_REST_URL,
    binance_ws_url: str = BINANCE_WS_URL,
    sim_seed: int = 42,
    sim_tick_ms: int = 1000,
    replay_path: str | Path | None = None,
    replay_speed: float = 1.0,
    stale_after_ms: int = 15_000,
    silent_after_ms: int = 5000,
    replay_loop: bool = False,
    probe_timeout_s: float = 3.0,
) -> MarketFeed:
    """The feed `source` names, not yet started (the caller registers handlers, then starts it).

    "auto" picks Binance when GET /fapi/v1/ping answers within `probe_timeout_s`, otherwise the
    simulation, and says so loudly in the log: simulated prices must never pass for real ones.
    """
    source = source.strip().lower()
    if source not in SOURCES:
        raise ValueError(f"unknown market source {source!r}; use one of {', '.join(SOURCES)}")
    explained = False
    if source == "auto":
        problem = await probe_binance(binance_rest_url, probe_timeout_s)
        if problem is None:
            logger.info("market data: Binance at %s is reachable, using it", binance_rest_url)
            source = "binance"
        else:
            logger.warning(
                "market data: Binance at %s is unreachable (%s); the SIMULATED feed is live "
                "(seed %d): prices are not real",
                binance_rest_url,
                problem,
                sim_seed,
            )
            source, explained = "sim", True
    if source == "binance":
        return BinanceFeed(
            binance_rest_url,
            binance_ws_url,
            stale_after_ms=stale_after_ms,
            silent_after_ms=silent_after_ms,
        )
    if source == "replay":
        path = Path(replay_path) if replay_path is not None else SAMPLE_PATH
        logger.warning("market data: REPLAYING recorded data from %s at %gx", path, replay_speed)
        return ReplayFeed(
            path,
            replay_speed,
            replay_loop,
            tick_ms=sim_tick_ms,
            stale_after_ms=stale_after_ms,
        )
    if not explained:
        logger.warning("market data: the SIMULATED feed is live (seed %d)", sim_seed)
    return SimFeed(seed=sim_seed, tick_ms=sim_tick_ms)
