"""Build the configured market feed from the service settings."""

from papertrade.config import Settings
from papertrade.market.feed import MarketFeed
from papertrade.market.select import build_feed


async def feed_from_settings(settings: Settings) -> MarketFeed:
    """The feed PAPERTRADE_MARKET_SOURCE names (not yet started)."""
    return await build_feed(
        settings.market_source,
        binance_rest_url=settings.binance_rest_url,
        binance_ws_url=settings.binance_ws_url,
        sim_seed=settings.sim_seed,
        sim_tick_ms=settings.sim_tick_ms,
        replay_path=settings.replay_path,
        replay_speed=settings.replay_speed,
        stale_after_ms=settings.stale_after_ms,
    )
