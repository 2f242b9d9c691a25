"""The kill switch while the rest of the service is degraded (issue #20, item 4): with Redis
gone, and with it the job queue's broker, the shared rate limits and the WebSocket fan-out, one
call still cancels every open order and closes every position on the exchange."""

from decimal import Decimal
from pathlib import Path

import pytest

from tests.conftest import make_settings, running_app
from tests.faults.helpers import redis_server
from tests.live.conftest import Exchange
from tests.live.test_live import exchange_orders, exchange_position, registered, settled
from tests.trading_api.helpers import limit, market, set_price
from tests.ws.conftest import fresh_database

# opens databases of its own (tests/databases.py)
pytestmark = pytest.mark.database


async def test_the_kill_switch_works_while_redis_is_down(
    tmp_path: Path, exchange: Exchange
) -> None:
    async with redis_server() as redis, fresh_database("kill_no_redis", tmp_path) as url:
        settings = make_settings(
            url,
            tmp_path / "service",
            redis_url=redis.url,
            live_exchange_url=exchange.url,
            live_exchange_timeout_ms=1500,
        )
        async with running_app(settings) as service:
            user, source, account_id = await registered(service, exchange)
            for app in (service, exchange.app):
                await set_price(app, "BTCUSDT", "50000")
            await market(user, source, "BTCUSDT", "buy", "0.1")
            await settled(user, account_id, 1)
            await limit(exchange.user, exchange.portfolio_id, "buy", "0.01", "40000")
            assert await exchange_position(exchange) == Decimal("0.1")

            redis.kill()
            health = (await user.get("/healthz")).json()
            assert health["redis"] == "down"
            answer = await user.post("/v1/live/kill", json={"close_positions": True})

            assert answer.status_code == 200, answer.text
            assert answer.json() == [
                {
                    "account_id": account_id,
                    "cancelled_symbols": ["BTCUSDT"],
                    "closed_symbols": ["BTCUSDT"],
                    "error": None,
                }
            ]
            assert await exchange_position(exchange) == 0
            assert [o for o in await exchange_orders(exchange) if o["status"] == "new"] == []
            account = (await user.get(f"/v1/live/accounts/{account_id}")).json()
            assert account["status"] == "killed"
