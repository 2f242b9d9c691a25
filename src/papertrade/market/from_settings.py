"""Build the configured market feed from the service settings."""

from redis.asyncio import Redis

from papertrade.config import Settings
from papertrade.kit.deployment import namespace
from papertrade.market.feed import MarketFeed
from papertrade.market.select import build_feed
from papertrade.market.shared import SharedFeed


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
        silent_after_ms=settings.binance_silent_after_ms,
    )


def shared_feed(settings: Settings, upstream: MarketFeed, redis: Redis | None) -> SharedFeed | None:
    """Scale-out (PostgreSQL and Redis): one upstream per deployment, shared; otherwise None."""
    if redis is None or settings.is_sqlite:
        return None
    return SharedFeed(
        upstream, redis, namespace(settings.database_url), stale_after_ms=settings.stale_after_ms
    )
