"""Waiting conditional orders live in the database: a restarted engine watches them again, and
a new order after the restart never takes a conditional order's id."""

from papertrade.config import Settings
from tests.conditional.helpers import conditional, wait_for_conditional
from tests.conftest import User, client_for, running_app, sign_up
from tests.trading_api.helpers import market, set_price


async def test_conditional_orders_survive_a_restart_and_trigger_after(
    isolated_settings: Settings,
) -> None:
    async with running_app(isolated_settings) as first:
        user = await sign_up(first)
        await set_price(first, "BTCUSDT", "60000")
        pid = (await user.portfolio())["id"]
        await market(user, pid, "BTCUSDT", "buy", "0.01")
        stop = await conditional(
            user,
            portfolio_id=pid,
            symbol="BTCUSDT",
            side="sell",
            type="stop_market",
            trigger_price="58000",
            close_position=True,
        )
        await user.client.aclose()
    async with running_app(isolated_settings) as second:
        assert stop["id"] in second.state.engine.triggers
        async with client_for(second) as client:
            await client.post(
                "/v1/auth/login", json={"email": user.email, "password": user.password}
            )
            again = User(client, user.email, user.password, user.profile)
            after = await market(again, pid, "BTCUSDT", "buy", "0.01")
            assert after["id"] > stop["id"]  # ids come from one sequence
            await set_price(second, "BTCUSDT", "57000")
            done = await wait_for_conditional(again, stop["id"], "triggered")
            closed = (await again.get(f"/v1/order/{done['actual_order_id']}")).json()
    assert closed["quantity"] == 0.02 and closed["avg_price"] == 57000
