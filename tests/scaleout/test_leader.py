"""Exactly one engine per deployment; a standby takes over with the books intact (issue 7.1)."""

import asyncio

import pytest

from papertrade.config import Settings
from tests.conftest import PG_URL, client_for, running_app, sign_up
from tests.trading_api.helpers import limit, order, set_price, wait_for_status

pytestmark = pytest.mark.skipif(
    not PG_URL, reason="leader election is a PostgreSQL feature; SQLite runs one process"
)


async def _until(condition: object, within: float = 30) -> None:
    deadline = asyncio.get_running_loop().time() + within
    while not condition():  # type: ignore[operator]
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.05)


async def test_one_engine_leads_and_a_standby_takes_over(isolated_settings: Settings) -> None:
    leader_process = running_app(isolated_settings)
    leader = await leader_process.__aenter__()
    leader_alive = True
    try:
        async with running_app(isolated_settings) as standby:
            assert leader.state.engine.active  # the first process takes the lock at start
            assert not standby.state.engine.active
            user = await sign_up(standby)
            await set_price(leader, "BTCUSDT", "60000")
            await set_price(standby, "BTCUSDT", "60000")
            pid = (await user.portfolio())["id"]
            # Placed through the standby process: the leader picks it up from the database.
            first = await limit(user, pid, "buy", "0.01", "59000")
            await _until(lambda: first["id"] in leader.state.engine.books.book("BTCUSDT"))
            await set_price(leader, "BTCUSDT", "58900")
            filled = await wait_for_status(user, first["id"], "filled")
            assert filled["avg_price"] == 59000

            second = await limit(user, pid, "buy", "0.01", "57000")
            leader_alive = False
            await leader_process.__aexit__(None, None, None)  # the leader goes away
            await _until(lambda: standby.state.engine.active)
            # `active` turns on before the books are rebuilt from the database: wait for that.
            await _until(lambda: second["id"] in standby.state.engine.books.book("BTCUSDT"))
            await set_price(standby, "BTCUSDT", "56000")
            done = await wait_for_status(user, second["id"], "filled")
            assert done["avg_price"] == 57000
            fills = (await user.get(f"/v1/portfolios/{pid}/fills")).json()
            assert sorted(f["order_id"] for f in fills) == sorted([first["id"], second["id"]])
            await user.client.aclose()
    finally:
        if leader_alive:
            await leader_process.__aexit__(None, None, None)


async def test_a_cancel_in_one_process_leaves_the_leaders_book(isolated_settings: Settings) -> None:
    async with running_app(isolated_settings) as leader, running_app(isolated_settings) as other:
        assert leader.state.engine.active and not other.state.engine.active
        user = await sign_up(other)
        await set_price(leader, "ETHUSDT", "3000")
        await set_price(other, "ETHUSDT", "3000")
        pid = (await user.portfolio())["id"]
        resting = await order(
            user,
            portfolio_id=pid,
            symbol="ETHUSDT",
            side="sell",
            type="limit",
            quantity="1",
            price="3100",
        )
        await _until(lambda: resting["id"] in leader.state.engine.books.book("ETHUSDT"))
        async with client_for(other):
            assert (await user.delete(f"/v1/order/{resting['id']}")).status_code == 200
        await set_price(leader, "ETHUSDT", "3200")  # crosses the stale book entry: skipped
        await asyncio.sleep(0.3)
        state = (await user.get(f"/v1/order/{resting['id']}")).json()
        assert state["status"] == "canceled" and state["filled_quantity"] == 0
        await user.client.aclose()
