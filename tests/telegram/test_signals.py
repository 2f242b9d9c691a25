"""Telegram as a signal source: Cornix-style messages from a bound user trade the portfolio they
chose through the same order path, staleness rule and signal history as the `tv` webhook."""

import asyncio
import time
from decimal import Decimal
from typing import Any

import orjson
from fastapi import FastAPI

from papertrade.config import Settings
from papertrade.models import TelegramUpdate
from papertrade.tg import jobs as tg_jobs
from papertrade.tg import signals, updates
from papertrade.tg.text import cornix_block
from tests.conftest import User, sign_up
from tests.fakes.telegram_api import FakeTelegram
from tests.foundation.helpers import hold_the_window
from tests.jobs.helpers import wait_for_job
from tests.notifications.helpers import wait_for_inbox
from tests.telegram.helpers import (
    link_code,
    message_update,
    processed,
    queued_mark,
    reply_after,
    send_update,
    telegram_app,
)
from tests.trading_api.helpers import positions, set_price

BLOCK = cornix_block(
    "BTCUSDT",
    "buy",
    leverage=10,
    entries=[Decimal(67000)],
    take_profits=[Decimal(68000), Decimal(69000)],
    stops=[Decimal(66000)],
)


async def _bound(app: FastAPI, fake: FakeTelegram, tg_user: int) -> tuple[User, int]:
    user = await sign_up(app)
    start = message_update(f"/start {await link_code(user)}", tg_user=tg_user)
    await send_update(app, start)
    assert await processed(app, start["update_id"]) == "bind"
    pid = (await user.portfolio(initial_balance="100000"))["id"]
    chosen = await user.client.put(
        "/v1/tg/signals",
        json={"portfolio_id": pid, "size_percent": "10"},
        headers=user.write_headers(),
    )
    assert chosen.status_code == 200, chosen.text
    assert chosen.json()["signal_portfolio_id"] == pid
    assert chosen.json()["signal_size_percent"] == 10
    return user, pid


async def _post(app: FastAPI, fake: FakeTelegram, tg_user: int, text: str, **kw: Any) -> str:
    """Post a message as the user; the bot's reply to it (not a notification, nor an earlier
    reply still on its way, such as the link's confirmation)."""
    mark = await queued_mark(app, tg_user)
    update = message_update(text, tg_user=tg_user)
    update["message"]["date"] = kw.get("date", int(time.time()))
    await send_update(app, update)
    await processed(app, update["update_id"])
    return await reply_after(app, fake, tg_user, mark)


async def _sent_starting(fake: FakeTelegram, chat_id: int, prefix: str, within: float = 30) -> str:
    deadline = asyncio.get_running_loop().time() + within
    while asyncio.get_running_loop().time() < deadline:
        found = [t for t in fake.to(chat_id) if t.startswith(prefix)]
        if found:
            return found[0]
        await asyncio.sleep(0.05)
    raise AssertionError(f"no message starting {prefix!r}: {fake.to(chat_id)}")


async def _signals(user: User, pid: int) -> list[dict[str, Any]]:
    listed = await user.get(f"/v1/portfolios/{pid}/signals")
    assert listed.status_code == 200, listed.text
    return list(listed.json()["signals"])


async def test_a_cornix_signal_opens_a_position_and_is_in_the_history(
    isolated_settings: Settings,
) -> None:
    async with telegram_app(isolated_settings) as (app, fake):
        user, pid = await _bound(app, fake, 1001)
        await set_price(app, "BTCUSDT", "67000")
        reply = await _post(app, fake, 1001, "⚡⚡ " + BLOCK)
        assert "executed" in reply and "stop-loss 66000 placed" in reply
        (signal,) = await _signals(user, pid)
        assert signal["source"] == "tg" and signal["status"] == "executed"
        assert signal["parsed"]["stop"] == ["66000"] and signal["parsed"]["take_profits"] == [
            "68000",
            "69000",
        ]
        assert signal["parsed"]["leverage"] == 10
        held = await positions(user, pid)
        assert held["BTCUSDT"]["side"] == "long" and held["BTCUSDT"]["leverage"] == 10
        # 10 % of the 100000 equity as margin, at 10x, at 67000: 1.492 BTC (step 0.001)
        assert Decimal(str(held["BTCUSDT"]["quantity"])) == Decimal("1.492")
        kinds = {n["kind"] for n in await wait_for_inbox(user, 2)}
        assert kinds == {"fill", "signal"}
        forwarded = await _sent_starting(fake, 1001, "#BTC/USDT")  # forwardable to Cornix
        assert forwarded.startswith(BLOCK + "\n\nSignal 1 (tg): buy 1.492 BTCUSDT market")
        # The footer ends with a link to the portfolio's page (domain rules B2.7).
        code = (await user.get(f"/v1/portfolios/{pid}")).json()["code"]
        page = f"{isolated_settings.public_base_url}/p/{code}"
        link = f'<a href="{page}">{page}</a>'
        assert forwarded.endswith(f"\n{link}")

        await set_price(app, "BTCUSDT", "67500")  # below the first take-profit
        closed = await _post(app, fake, 1001, "close BTCUSDT")  # the tv text commands work too
        assert "executed" in closed
        assert await positions(user, pid) == {}
        # The close as B2.7's close notice: 1.492 × (67500 − 67000) = 746 USDT, 500 / 67000.
        notice = await _sent_starting(fake, 1001, "#BTC/USDT closed")
        assert notice == (
            "#BTC/USDT closed at 67500 (+0.75% | +746 USDT)\n\n"
            "Signal 2 (tg): sell 1.492 BTCUSDT market: filled; "
            f"cancelled 3 waiting stop/take-profit order(s)\n{link}"
        )


async def test_a_chats_signals_trade_in_the_order_telegram_numbered_them(
    isolated_settings: Settings,
) -> None:
    """A signal then its close leave the portfolio flat, whichever job runs first: each
    update's job processes its chat's earlier updates first. Jobs run side by side (and
    Telegram may deliver updates at once); had the close gone first, the signal would have
    left a position open."""
    async with telegram_app(isolated_settings) as (app, fake):
        user, pid = await _bound(app, fake, 1007)
        await set_price(app, "BTCUSDT", "67000")
        received = [
            message_update(text, tg_user=1007) for text in ("⚡⚡ " + BLOCK, "close BTCUSDT")
        ]
        for update in received:
            update["message"]["date"] = int(time.time())
        async with app.state.ctx.transaction() as uow:  # stored as the webhook stores them
            for update in received:
                uow.session.add(
                    TelegramUpdate(
                        update_id=update["update_id"],
                        body=orjson.dumps(update).decode(),
                        chat_id=updates.chat_of(update),
                    )
                )
        jobs = app.state.jobs
        later = await jobs.enqueue(tg_jobs.PROCESS_UPDATE, update_id=received[1]["update_id"])
        await wait_for_job(app, later, "succeeded")  # the close's job, alone, first
        earlier = await jobs.enqueue(tg_jobs.PROCESS_UPDATE, update_id=received[0]["update_id"])
        await wait_for_job(app, earlier, "succeeded")

        assert [await processed(app, u["update_id"]) for u in received] == ["signal", "signal"]
        assert await positions(user, pid) == {}
        close, signal = await _signals(user, pid)  # newest first
        assert (signal["status"], signal["parsed"]["leverage"]) == ("executed", 10), signal
        assert (close["status"], close["parsed"][0]["action"]) == ("executed", "close"), close
        assert signal["id"] < close["id"]  # the signal traded first


async def test_a_wrong_signal_gets_a_reply_saying_what_to_fix(isolated_settings: Settings) -> None:
    async with telegram_app(isolated_settings) as (app, fake):
        user, pid = await _bound(app, fake, 1002)
        await set_price(app, "ETHUSDT", "3000")
        no_stop = await _post(app, fake, 1002, "#ETH/USDT\nEntry: 3000\nTP: 3100")
        assert "not executed (invalid)" in no_stop and "Stop: &lt;price&gt;" in no_stop
        wrong_side = await _post(app, fake, 1002, "#ETH/USDT Long\nEntry 3000\nTP 3100\nStop 3200")
        assert "wrong side" in wrong_side
        unknown = await _post(app, fake, 1002, "#NOPE/USDT\nEntry 1\nTP 2\nStop 0.5")
        assert "Unknown symbol" in unknown
        old = await _post(
            app,
            fake,
            1002,
            "#ETH/USDT\nEntry 3000\nTP 3100\nStop 2900",
            date=int(time.time()) - 600,
        )
        assert "not executed (stale)" in old
        statuses = [s["status"] for s in await _signals(user, pid)]
        assert statuses == ["stale", "invalid", "invalid", "invalid"]
        assert await positions(user, pid) == {}


async def test_a_signal_without_a_chosen_portfolio_is_not_traded(
    isolated_settings: Settings,
) -> None:
    async with telegram_app(isolated_settings) as (app, fake):
        user = await sign_up(app)
        start = message_update(f"/start {await link_code(user)}", tg_user=1003)
        await send_update(app, start)
        await processed(app, start["update_id"])
        await _sent_starting(fake, 1003, "Linked to")  # else it could be taken for the reply
        reply = await _post(app, fake, 1003, BLOCK)
        assert reply.startswith("To trade signals posted here, choose a portfolio")


async def test_choosing_the_portfolio_is_checked(isolated_settings: Settings) -> None:
    async with telegram_app(isolated_settings) as (app, fake):
        owner, pid = await _bound(app, fake, 1004)
        other = await sign_up(app)
        own = (await other.portfolio())["id"]
        not_bound = await other.client.put(
            "/v1/tg/signals", json={"portfolio_id": own}, headers=other.write_headers()
        )
        assert not_bound.status_code == 409 and not_bound.json()["error"] == "telegram_not_bound"
        start = message_update(f"/start {await link_code(other)}", tg_user=1005)
        await send_update(app, start)
        await processed(app, start["update_id"])
        stolen = await other.client.put(
            "/v1/tg/signals", json={"portfolio_id": pid}, headers=other.write_headers()
        )
        assert stolen.status_code == 404 and stolen.json()["error"] == "portfolio_not_found"
        for body in (
            {"portfolio_id": pid, "size_percent": 0},
            {"portfolio_id": pid, "size_percent": "101"},
        ):
            bad = await owner.client.put("/v1/tg/signals", json=body, headers=owner.write_headers())
            assert bad.status_code == 422 and bad.json()["error"] == "validation_error"


async def test_the_same_update_never_trades_twice(isolated_settings: Settings) -> None:
    async with telegram_app(isolated_settings) as (app, fake):
        user, pid = await _bound(app, fake, 1006)
        await set_price(app, "BTCUSDT", "67000")
        source = signals.Source(user.id, pid, Decimal(10), 99_001, int(time.time() * 1000))
        first = await signals.receive(app.state.ctx, source, BLOCK)
        again = await signals.receive(app.state.ctx, source, BLOCK)  # a retried job
        assert "executed" in first and again == "Already handled this message."
        statuses = [s["status"] for s in await _signals(user, pid)]
        assert statuses == ["duplicate", "executed"]
        assert Decimal(str((await positions(user, pid))["BTCUSDT"]["quantity"])) == Decimal("1.492")


async def test_the_eighth_signal_in_a_minute_is_refused_and_nothing_runs_twice(
    isolated_settings: Settings,
) -> None:
    # Each signal is answered, and told as a fill and a Cornix block: 25 messages to the chat,
    # sent faster than Telegram's pace so the answer to the 8th comes soon.
    async with telegram_app(isolated_settings, telegram_per_chat_per_s=20.0) as (app, fake):
        user, pid = await _bound(app, fake, 1007)
        await set_price(app, "BTCUSDT", "67000")
        hold_the_window()  # the limit counts per clock minute: the burst falls in one
        posted = []
        for _ in range(8):  # one after the other, each handled before the next is posted
            update = message_update(BLOCK, tg_user=1007)
            update["message"]["date"] = int(time.time())
            assert (await send_update(app, update)).json() == {"ok": True, "duplicate": False}
            posted.append((update, await processed(app, update["update_id"], within=30)))
        assert [outcome for _, outcome in posted] == ["signal"] * 7 + ["signal rate limited"]

        # The 8th is answered with why and when to post again; the 7 before it traded.
        refusal = await _sent_starting(fake, 1007, "At most 7 signals a minute", within=30)
        assert refusal.startswith("At most 7 signals a minute; this one was not used. Post it ")
        wait = int(refusal.rsplit(" in ", 1)[1].removesuffix(" s."))
        assert 1 <= wait <= 60
        history = await _signals(user, pid)
        assert [s["status"] for s in history] == ["executed"] * 7
        assert len({order for s in history for order in s["order_ids"]}) == 7

        # Telegram delivering updates again (the refused one, an executed one) changes nothing.
        for update, _ in (posted[7], posted[0]):
            again = await send_update(app, update)
            assert again.json() == {"ok": True, "duplicate": True}
        assert len(await _signals(user, pid)) == 7
        entries = sum(Decimal(s["msg"].split()[1]) for s in history)  # "buy 1.492 BTCUSDT …"
        held = await positions(user, pid)
        assert Decimal(str(held["BTCUSDT"]["quantity"])) == entries
