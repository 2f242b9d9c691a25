"""priceProtect holds a trigger while mark and last price diverge; a trailing stop's best price
survives a restart (issue 21: "priceProtect stored, not applied" and "best price in memory only").
"""

import asyncio
from decimal import Decimal
from typing import Any

from papertrade.config import Settings
from papertrade.engine.triggers import TriggerWatch
from papertrade.trading.conditional import trailing_level
from papertrade.trading.enums import Side
from papertrade.trading.values import Quote
from tests.conditional.helpers import conditional, wait_for_conditional
from tests.conftest import User, client_for, running_app, sign_up
from tests.trading_api.helpers import market, set_price


def _stop(conditional_id: int, *, protect: bool) -> dict[str, Any]:
    return {
        "id": conditional_id,
        "portfolio_id": 1,
        "symbol": "BTCUSDT",
        "side": "sell",
        "type": "stop_market",
        "working_type": "MARK_PRICE",
        "trigger_price": "58000",
        "reduce_only": False,
        "price_protect": protect,
        "callback_rate": None,
        "activation_price": None,
    }


def _quote(mark: str, last: str) -> Quote:
    return Quote("BTCUSDT", Decimal(mark), Decimal(last), Decimal(mark), Decimal(0), 0, 0)


def test_price_protection_holds_the_trigger_while_mark_and_last_diverge() -> None:
    watch = TriggerWatch()
    watch.watch(_stop(1, protect=True))
    watch.watch(_stop(2, protect=False))
    # The mark fell through 58,000 but the last price is 6 % away: only the unprotected fires.
    fired = watch.reached(_quote("57900", "61500"))
    assert fired is not None and fired.ids == [2]
    assert 1 in watch and 2 not in watch
    # Within 5 % of each other again: the protected one fires too.
    fired = watch.reached(_quote("57900", "58100"))
    assert fired is not None and fired.ids == [1]


async def test_a_trailing_stop_resumes_from_its_best_price_after_a_restart(
    isolated_settings: Settings,
) -> None:
    async with running_app(isolated_settings) as first:
        # Around the simulated price of the moment: the restarted service's first ticks are the
        # simulation's own (no pin survives a restart), so that is where the test resumes.
        quote = first.state.ctx.market.quote("BTCUSDT")
        start = quote.mark_price.quantize(Decimal(1))
        high = (start * Decimal("1.05")).quantize(Decimal(1))
        user = await sign_up(first)
        await set_price(first, "BTCUSDT", str(start))
        pid = (await user.portfolio(initial_balance="100000"))["id"]
        await market(user, pid, "BTCUSDT", "buy", "0.01")
        trail = await conditional(
            user,
            portfolio_id=pid,
            symbol="BTCUSDT",
            side="sell",
            type="trailing_stop_market",
            callback_rate="1",
            close_position=True,
            working_price="mark",
        )
        await set_price(first, "BTCUSDT", str(high))  # the best price: the stop moves to 99 %
        for _ in range(300):  # the engine saves it within about a second
            seen = (await user.get(f"/v1/conditional-order/{trail['id']}")).json()
            if seen["trailing_extreme"] == float(high):
                break
            await asyncio.sleep(0.05)
        assert seen["trailing_extreme"] == float(high)
        await user.client.aclose()
    async with running_app(isolated_settings) as second, client_for(second) as client:
        await client.post("/v1/auth/login", json={"email": user.email, "password": user.password})
        again = User(client, user.email, user.password, user.profile)
        # Back near `start`, 5 % under the remembered high: below its 1 % trail at once. Had
        # the stop forgotten the high it would trail from `start` and wait.
        done = await wait_for_conditional(again, trail["id"], "triggered", within=15)
    level = trailing_level(Side.SELL, high, Decimal(1))
    assert abs(Decimal(str(done["trigger_price"])) - level) < Decimal("0.2")
