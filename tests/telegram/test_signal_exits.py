"""A Cornix signal's stop and take-profits are real conditional orders: the stop closes what is
left of the position, each take-profit closes its share, and a full close cancels the rest."""

import asyncio
from decimal import Decimal
from typing import Any

from papertrade.config import Settings
from papertrade.tg.exits import split
from tests.conditional.helpers import wait_for_conditional
from tests.conftest import User
from tests.telegram.helpers import telegram_app as telegram_app_for
from tests.telegram.test_signals import BLOCK, _bound, _post, _signals
from tests.trading.conftest import BTC
from tests.trading_api.helpers import positions, set_price


async def _exits(user: User, pid: int, status: str = "all") -> list[dict[str, Any]]:
    listed = await user.get("/v1/conditional-order", params={"portfolio_id": pid, "status": status})
    assert listed.status_code == 200, listed.text
    return sorted(listed.json()["conditional_orders"], key=lambda row: row["id"])


async def _held(user: User, pid: int) -> Decimal:
    held = await positions(user, pid)
    return Decimal(str(held["BTCUSDT"]["quantity"])) if "BTCUSDT" in held else Decimal(0)


async def test_a_market_entry_places_its_stop_and_take_profits(
    isolated_settings: Settings,
) -> None:
    async with telegram_app_for(isolated_settings) as (app, fake):
        user, pid = await _bound(app, fake, 1101)
        await set_price(app, "BTCUSDT", "67000")
        reply = await _post(app, fake, 1101, BLOCK)
        assert "executed" in reply and "stop-loss 66000 placed" in reply
        assert "take-profit 1 68000 for 0.746 placed" in reply
        assert "take-profit 2 69000 for 0.746 placed" in reply
        stop, tp1, tp2 = await _exits(user, pid, "open")
        assert (stop["type"], stop["side"], stop["trigger_price"], stop["close_position"]) == (
            "stop_market",
            "sell",
            66000,
            True,
        )
        for tp, price in ((tp1, 68000), (tp2, 69000)):
            assert (tp["type"], tp["side"], tp["trigger_price"], tp["reduce_only"]) == (
                "take_profit_market",
                "sell",
                price,
                True,
            )
            assert Decimal(str(tp["quantity"])) == Decimal("0.746")  # 1.492 split in two
        (signal,) = await _signals(user, pid)
        assert "stop-loss 66000 placed" in signal["msg"] and "take-profit 2 69000" in signal["msg"]

        await set_price(app, "BTCUSDT", "68010")  # the first target: half the position closes
        await wait_for_conditional(user, int(tp1["id"]), "triggered")
        assert await _held(user, pid) == Decimal("0.746")

        await set_price(app, "BTCUSDT", "65990")  # the stop closes the rest, and cancels tp 2
        await wait_for_conditional(user, int(stop["id"]), "triggered")
        await wait_for_conditional(user, int(tp2["id"]), "canceled")
        assert await _held(user, pid) == 0
        await set_price(app, "BTCUSDT", "69500")  # the cancelled target never trades
        assert await _held(user, pid) == 0


async def test_a_limit_entry_places_reduce_only_exits_that_wait_for_the_fill(
    isolated_settings: Settings,
) -> None:
    async with telegram_app_for(isolated_settings) as (app, fake):
        user, pid = await _bound(app, fake, 1102)
        await set_price(app, "BTCUSDT", "67500")  # above the entry: a limit buy at 67000 rests
        reply = await _post(app, fake, 1102, BLOCK)
        assert "limit: new" in reply and "stop-loss 66000 placed" in reply
        stop, tp1, tp2 = await _exits(user, pid, "open")
        assert stop["close_position"] is True
        # 10 % of 100000 equity at 10x, at the entry 67000: 1.492; the first target takes 0.746
        assert [Decimal(str(tp["quantity"])) for tp in (tp1, tp2)] == [
            Decimal("0.746"),
            Decimal("0.746"),
        ]
        assert all(tp["reduce_only"] for tp in (tp1, tp2))
        assert await _held(user, pid) == 0  # nothing opens before the entry fills

        await set_price(app, "BTCUSDT", "66990")  # the entry fills
        for _ in range(600):
            if await _held(user, pid) == Decimal("1.492"):
                break
            await asyncio.sleep(0.05)
        assert await _held(user, pid) == Decimal("1.492")
        await set_price(app, "BTCUSDT", "68010")
        await wait_for_conditional(user, int(tp1["id"]), "triggered")
        assert await _held(user, pid) == Decimal("0.746")


async def test_a_signal_whose_stop_the_price_has_passed_is_refused(
    isolated_settings: Settings,
) -> None:
    async with telegram_app_for(isolated_settings) as (app, fake):
        user, pid = await _bound(app, fake, 1103)
        await set_price(app, "BTCUSDT", "65000")  # below the stop 66000: it would close at once
        reply = await _post(app, fake, 1103, BLOCK)
        assert "not executed (rejected)" in reply and "already past it" in reply
        assert await positions(user, pid) == {}
        assert await _exits(user, pid) == []


async def test_a_target_the_price_has_passed_is_not_placed(isolated_settings: Settings) -> None:
    async with telegram_app_for(isolated_settings) as (app, fake):
        user, pid = await _bound(app, fake, 1104)
        await set_price(app, "BTCUSDT", "68500")  # past the first target: the entry rests
        reply = await _post(app, fake, 1104, BLOCK)
        assert "1 take-profit(s) already passed by the price, not placed" in reply
        stop, tp = await _exits(user, pid, "open")
        assert stop["type"] == "stop_market"
        # the whole entry (1.492 at the 67000 limit) on the one target left
        assert (tp["trigger_price"], Decimal(str(tp["quantity"]))) == (69000, Decimal("1.492"))


def test_the_split_floors_to_the_step_and_puts_the_remainder_last() -> None:
    btc = BTC  # lot step and minimum 0.001
    assert split(Decimal("1.000"), 3, btc) == [Decimal("0.333"), Decimal("0.333"), Decimal("0.334")]
    assert split(Decimal("0.002"), 4, btc) == [Decimal("0.001"), Decimal("0.001")]
    assert split(Decimal("0.001"), 2, btc) == [Decimal("0.001")]
