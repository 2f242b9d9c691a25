"""Kill -9 the engine leader of a scale-out deployment under load: nothing acknowledged is lost."""

from pathlib import Path

import pytest
import redis.asyncio as redis

from papertrade.config import Settings
from tests.conftest import PG_URL
from tests.reliability.failover import run_failover

pytestmark = pytest.mark.skipif(
    not PG_URL, reason="scale-out (engine leader election) is PostgreSQL"
)
REDIS_URL = "redis://127.0.0.1:6379/12"


async def test_kill_minus_nine_of_the_engine_leader_loses_nothing(
    isolated_settings: Settings, tmp_path: Path
) -> None:
    client = redis.Redis.from_url(REDIS_URL)
    try:
        await client.ping()
    except (redis.ConnectionError, OSError):
        pytest.skip(f"Redis is not reachable at {REDIS_URL}")
    finally:
        await client.aclose()
    report = await run_failover(
        tmp_path,
        isolated_settings.database_url,
        REDIS_URL,
        kills=3,
        seconds_between=2.0,
        acked_between=15,
    )
    assert report.kills == 3 and len(report.takeover_s) == 3
    assert max(report.takeover_s) < 5  # a standby takes over within about a second
    assert report.acknowledged > 30 and report.fapi_orders > 5  # the load ran on both surfaces
    assert report.lost == []
    assert report.duplicate_fills == []
    assert report.overfilled == []
    assert report.resting_lost == []
    assert report.ledger_mismatches == []
    assert report.position_mismatches == []
    assert report.maker_fills > 0  # the leaders' engines matched resting orders
    assert report.crossed_unfilled == []
