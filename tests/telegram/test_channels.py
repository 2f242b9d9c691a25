"""Telegram channels as a signal source: a bound user makes the bot an administrator of their
channel, chooses the portfolio, and the channel's Cornix posts trade it (same de-duplication,
staleness and signal history as private messages); corrections go to the owner's private chat,
never to the channel."""

import asyncio
import itertools
import time
from decimal import Decimal
from typing import Any

from fastapi import FastAPI

from papertrade.config import Settings
from tests.conftest import User, sign_up
from tests.fakes.telegram_api import FakeTelegram
from tests.telegram.helpers import link_code, message_update, processed, send_update, telegram_app
from tests.telegram.test_signals import BLOCK, _signals
from tests.trading_api.helpers import positions, set_price

CHANNEL = -1001234567890
_ids = itertools.count(50_000)


def _member(tg_user: int, status: str, chat_id: int = CHANNEL) -> dict[str, Any]:
    return {
        "update_id": next(_ids),
        "my_chat_member": {
            "chat": {"id": chat_id, "type": "channel", "title": "Ann <Signals>"},
            "from": {"id": tg_user, "is_bot": False, "first_name": "Ann"},
            "date": int(time.time()),
            "old_chat_member": {"status": "left", "user": {"id": 123456, "is_bot": True}},
            "new_chat_member": {"status": status, "user": {"id": 123456, "is_bot": True}},
        },
    }


def _post(text: str, *, date: int | None = None, chat_id: int = CHANNEL) -> dict[str, Any]:
    return {
        "update_id": next(_ids),
        "channel_post": {
            "message_id": 7,
            "date": date if date is not None else int(time.time()),
            "chat": {"id": chat_id, "type": "channel", "title": "Ann <Signals>"},
            "sender_chat": {"id": chat_id, "type": "channel"},
            "text": text,
        },
    }


async def _reply(fake: FakeTelegram, chat_id: int, before: int, prefix: str = "") -> str:
    for _ in range(300):
        found = [t for t in fake.to(chat_id)[before:] if t.startswith(prefix)]
        if found:
            return found[0]
        await asyncio.sleep(0.05)
    raise AssertionError(f"no reply starting {prefix!r}: {fake.to(chat_id)}")


async def _handled(app: FastAPI, update: dict[str, Any]) -> str:
    response = await send_update(app, update)
    assert response.status_code == 200, response.text
    return await processed(app, update["update_id"])


async def _connected(app: FastAPI, fake: FakeTelegram, tg_user: int) -> tuple[User, int]:
    user = await sign_up(app)
    start = message_update(f"/start {await link_code(user)}", tg_user=tg_user)
    await send_update(app, start)
    assert await processed(app, start["update_id"]) == "bind"
    before = len(fake.to(tg_user))
    assert await _handled(app, _member(tg_user, "administrator")) == "channel connected"
    told = await _reply(fake, tg_user, before, "Channel")
    assert "Ann &lt;Signals&gt; connected" in told
    pid = (await user.portfolio(initial_balance="100000"))["id"]
    return user, pid


async def test_a_channel_post_trades_the_chosen_portfolio_and_replies_privately(
    isolated_settings: Settings,
) -> None:
    async with telegram_app(isolated_settings) as (app, fake):
        user, pid = await _connected(app, fake, 2001)
        (listed,) = (await user.get("/v1/tg/channels")).json()
        assert listed["chat_id"] == CHANNEL and listed["title"] == "Ann <Signals>"
        assert listed["portfolio_id"] is None

        before = len(fake.to(2001))  # no portfolio yet: the owner is told, nothing trades
        assert await _handled(app, _post(BLOCK)) == "no signal portfolio"
        assert "no portfolio is chosen" in await _reply(fake, 2001, before, "A signal")

        chosen = await user.client.put(
            f"/v1/tg/channels/{CHANNEL}",
            json={"portfolio_id": pid, "size_percent": "10"},
            headers=user.write_headers(),
        )
        assert chosen.status_code == 200, chosen.text
        assert chosen.json()["portfolio_id"] == pid and chosen.json()["size_percent"] == 10

        await set_price(app, "BTCUSDT", "67000")
        before = len(fake.to(2001))
        post = _post(BLOCK)
        assert await _handled(app, post) == "signal"
        reply = await _reply(fake, 2001, before, "In Ann &lt;Signals&gt;: Signal")
        assert "executed" in reply and "stop-loss 66000 placed" in reply
        held = await positions(user, pid)
        assert Decimal(str(held["BTCUSDT"]["quantity"])) == Decimal("1.492")
        (signal,) = [s for s in await _signals(user, pid) if s["status"] != "invalid"]
        assert signal["source"] == "tg" and signal["status"] == "executed"

        # Telegram re-delivers the same update: acknowledged, never traded twice.
        again = await send_update(app, post)
        assert again.json() == {"ok": True, "duplicate": True}
        assert Decimal(str((await positions(user, pid))["BTCUSDT"]["quantity"])) == Decimal("1.492")
        # The bot never writes in the channel itself.
        assert fake.to(CHANNEL) == []


async def test_wrong_stale_and_chatter_posts(isolated_settings: Settings) -> None:
    async with telegram_app(isolated_settings) as (app, fake):
        user, pid = await _connected(app, fake, 2002)
        await user.client.put(
            f"/v1/tg/channels/{CHANNEL}",
            json={"portfolio_id": pid},
            headers=user.write_headers(),
        )
        await set_price(app, "ETHUSDT", "3000")
        before = len(fake.to(2002))
        await _handled(app, _post("#ETH/USDT\nEntry: 3000\nTP: 3100"))
        fix = await _reply(fake, 2002, before, "In Ann")
        assert "not executed (invalid)" in fix and "Stop" in fix

        before = len(fake.to(2002))
        await _handled(app, _post("#ETH/USDT\nEntry 3000\nTP 3100\nStop 2900", date=1))
        assert "not executed (stale)" in await _reply(fake, 2002, before, "In Ann")

        before = len(fake.to(2002))
        assert await _handled(app, _post("Good morning, traders!")) == "ignored: not a signal"
        other = await _handled(app, _post(BLOCK, chat_id=-100999))
        assert other == "ignored: channel not connected"
        assert [s["status"] for s in await _signals(user, pid)] == ["stale", "invalid"]
        assert await positions(user, pid) == {}
        assert fake.to(CHANNEL) == []


async def test_connecting_needs_a_linked_account_and_removal_disconnects(
    isolated_settings: Settings,
) -> None:
    async with telegram_app(isolated_settings) as (app, fake):
        outcome = await _handled(app, _member(2999, "administrator", chat_id=-100777))
        assert outcome == "channel refused: not linked"
        assert "link your Papertrade account first" in await _reply(fake, 2999, 0)

        user, pid = await _connected(app, fake, 2003)
        stranger = await sign_up(app)
        for call in (
            stranger.client.put(
                f"/v1/tg/channels/{CHANNEL}",
                json={"portfolio_id": None},
                headers=stranger.write_headers(),
            ),
            stranger.client.delete(f"/v1/tg/channels/{CHANNEL}", headers=stranger.write_headers()),
            stranger.client.put(
                "/v1/tg/channels/99999999999999999999999",
                json={"portfolio_id": None},
                headers=stranger.write_headers(),
            ),
        ):
            refused = await call
            assert refused.status_code == 404, refused.text
            assert refused.json()["error"] == "telegram_channel_not_found"
        theirs = (await stranger.portfolio())["id"]
        stolen = await user.client.put(
            f"/v1/tg/channels/{CHANNEL}",
            json={"portfolio_id": theirs},
            headers=user.write_headers(),
        )
        assert stolen.status_code == 404 and stolen.json()["error"] == "portfolio_not_found"

        before = len(fake.to(2003))
        assert await _handled(app, _member(2003, "left")) == "channel disconnected"
        assert "no longer an administrator" in await _reply(fake, 2003, before)
        assert (await user.get("/v1/tg/channels")).json() == []
        assert await _handled(app, _post(BLOCK)) == "ignored: channel not connected"
        assert pid
