"""Notifications leave for Telegram through python-telegram-bot and a fake Bot API: escaped,
split at 4096 characters, paced per chat and overall, 429 honoured, 403 deactivating."""

import asyncio

from fastapi import FastAPI
from sqlalchemy import select

from papertrade.config import Settings
from papertrade.models import TelegramMessage
from papertrade.tg import service
from papertrade.tg.text import LIMIT
from tests.conftest import User, sign_up
from tests.fakes.telegram_api import Sent
from tests.notifications.helpers import wait_for_inbox
from tests.telegram.helpers import link_code, message_update, processed, send_update, telegram_app
from tests.trading_api.helpers import market, set_price
from tests.webhooks.helpers import Hook


async def _bind(app: FastAPI, user: User, tg_user: int) -> None:
    start = message_update(f"/start {await link_code(user)}", tg_user=tg_user)
    await send_update(app, start)
    assert await processed(app, start["update_id"]) == "bind"


async def _queue(app: FastAPI, chat_id: int, texts: list[str]) -> None:
    async with app.state.ctx.transaction() as uow:
        for text in texts:
            service.queue(uow, chat_id, text)


async def test_a_fill_reaches_the_bound_chat_and_a_blocked_bot_deactivates_it(
    isolated_settings: Settings,
) -> None:
    async with telegram_app(isolated_settings) as (app, fake):
        user = await sign_up(app)
        await _bind(app, user, 700)
        await set_price(app, "BTCUSDT", "50000")
        pid = (await user.portfolio(name="<b>risky</b> & co"))["id"]
        await market(user, pid, "BTCUSDT", "buy", "0.002")
        await fake.wait_for(2)  # "Linked…", then the fill
        fill = fake.to(700)[1]
        assert fill.startswith("<b>BTCUSDT buy order filled</b>\nBought 0.002 BTCUSDT at 50,000.0")

        fake.blocked.add(700)
        await market(user, pid, "BTCUSDT", "sell", "0.002")
        await wait_for_inbox(user, 2)  # the inbox still gets it
        for _ in range(600):
            status = (await user.get("/v1/tg/status")).json()
            if status["status"] == "inactive":
                break
            await asyncio.sleep(0.05)
        assert status == {**status, "bound": True, "status": "inactive"}
        async with app.state.ctx.db.reader() as session:
            statuses = list(await session.scalars(
                select(TelegramMessage.status).order_by(TelegramMessage.id)))  # fmt: skip
        assert statuses == ["sent", "sent", "blocked"]
        assert len(fake.to(700)) == 2


async def test_a_kind_turned_off_for_telegram_is_not_sent(isolated_settings: Settings) -> None:
    async with telegram_app(isolated_settings) as (app, fake):
        user = await sign_up(app)
        await _bind(app, user, 701)
        await fake.wait_for(1)
        await user.client.put(
            "/v1/inbox/preferences",
            json={"preferences": {"fill": {"telegram": False}, "system": {"telegram": True}}},
            headers=user.write_headers(),
        )
        await set_price(app, "ETHUSDT", "3000")
        pid = (await user.portfolio())["id"]
        await market(user, pid, "ETHUSDT", "buy", "0.1")
        await wait_for_inbox(user, 1)
        from papertrade.notifications import service as notifications
        from papertrade.notifications.kinds import Message

        async with app.state.ctx.transaction() as uow:
            await notifications.notify_many(uow, [user.id], "system", Message("a & b <c>", "x"))
        await fake.wait_for(2)
        assert fake.to(701)[1:] == ["<b>a &amp; b &lt;c&gt;</b>\nx"]  # no fill: turned off


def _max_in_window(times: list[float], window: float) -> int:
    """The most messages in any span of `window` seconds."""
    best = 0
    for i, start in enumerate(times):
        best = max(best, sum(1 for t in times[i:] if t - start < window))
    return best


async def test_a_webhook_signal_that_closes_a_position_sends_the_close_notice(
    isolated_settings: Settings,
) -> None:
    # Served under a path with an "&": the footer's link is escaped like any text.
    base = f"{isolated_settings.public_base_url}/paper&trade"
    async with telegram_app(isolated_settings, public_base_url=base) as (app, fake):
        user = await sign_up(app)
        await _bind(app, user, 704)
        hook = await Hook.create(app, user)
        await set_price(app, "BTCUSDT", "50000")
        await hook.ok("buy BTCUSDT 0.01")
        await set_price(app, "BTCUSDT", "51000")
        await hook.ok("close BTCUSDT")
        for _ in range(600):
            notices = [t for t in fake.to(704) if t.startswith("#BTC/USDT closed")]
            if notices:
                break
            await asyncio.sleep(0.05)
        # 0.01 × (51000 − 50000) = 10 USDT, 1000 / 50000 = 2 %: forwardable to Cornix, with
        # the footer's link to the portfolio's page (B2.7)
        code = (await user.get(f"/v1/portfolios/{hook.portfolio_id}")).json()["code"]
        page = f"{isolated_settings.public_base_url}/paper&amp;trade/p/{code}"
        assert notices == [
            "#BTC/USDT closed at 51000 (+2% | +10 USDT)\n\n"
            "Signal 2 (tv): sell 0.01 BTCUSDT market (close): filled\n"
            f'<a href="{page}">{page}</a>'
        ]


async def test_sends_stay_within_the_per_chat_and_global_rates(
    isolated_settings: Settings,
) -> None:
    async with telegram_app(
        isolated_settings, telegram_per_chat_per_s=2.0, telegram_global_per_s=5.0
    ) as (app, fake):
        for chat in (801, 802, 803):
            await _queue(app, chat, [f"m{chat}-{i}" for i in range(4)])
        sent: list[Sent] = await fake.wait_for(12, within=30)
        for chat in (801, 802, 803):
            assert fake.to(chat) == [f"m{chat}-{i}" for i in range(4)]  # in order
            times = [s.at for s in sent if s.chat_id == chat]
            assert _max_in_window(times, 0.5) <= 1  # at most 2 a second to one chat
        # network jitter can only stretch gaps the sender kept, never shrink them much
        assert _max_in_window([s.at for s in sent], 1.0) <= 5 + 1


async def test_a_429_is_waited_out_and_a_long_message_is_split(
    isolated_settings: Settings,
) -> None:
    async with telegram_app(isolated_settings) as (app, fake):
        fake.flood_next, fake.retry_after = 1, 1
        long = "&amp;" * 1000  # 5000 characters of entities: cut between them, never inside
        await _queue(app, 900, ["first", long])
        await fake.wait_for(3, within=20)
        texts = fake.to(900)
        assert texts[0] == "first"  # refused once with 429, then sent
        assert len(texts[1]) <= LIMIT and texts[1] + texts[2] == long
        assert texts[1].endswith("&amp;") and texts[2].startswith("&amp;")
        (flooded,) = fake.flooded_at
        assert fake.sent[0].at >= flooded + 0.9  # not before the retry_after Telegram asked
