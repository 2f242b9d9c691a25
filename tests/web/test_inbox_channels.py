"""The inbox page's channel cards in a real browser: the bell counts live on another page,
Telegram signals (a connected channel's portfolio) and the bot's message history with an
interrupted send, email frequency and mail history, and a Finnhub source with its history."""

import asyncio
import time
from typing import Any

import httpx
from playwright.async_api import Page, expect

from papertrade.mail import service as mail_service
from papertrade.models import TelegramBinding, TelegramChannel, TelegramMessage
from papertrade.notifications import service
from papertrade.notifications.kinds import Message
from tests.conftest import unique_email
from tests.web.conftest import Steps, WebApp, call, sign_up_in_browser


async def _until(check: Any, what: str) -> None:
    deadline = time.monotonic() + 15
    while not await check():
        assert time.monotonic() < deadline, what
        await asyncio.sleep(0.05)


async def test_the_bell_counts_live_on_any_page(page: Page, web: WebApp, steps: Steps) -> None:
    async with steps("sign up; the dashboard shows no count"):
        await sign_up_in_browser(page, unique_email("bell"))
        me = await call(page, "GET", "/v1/user")
        await expect(page.locator("#inbox-count")).to_be_hidden()
        # The bell's socket subscribes after the page loads: what follows is pushed to it.
        hub = web.app.state.realtime.hub

        async def subscribed() -> bool:
            return bool(hub.has(f"inbox:{me['id']}"))

        await _until(subscribed, "the bell's socket subscribes to the inbox")
    async with steps("two notifications arrive: the bell says so without a reload"):
        for title in ("One", "Two"):
            async with web.app.state.ctx.transaction() as uow:
                await service.notify_many(uow, [me["id"]], "system", Message(title, ""))
            await expect(page.locator("#inbox-count")).to_have_text("1" if title == "One" else "2")
        assert page.url.endswith("/app")


async def test_channel_cards(page: Page, web: WebApp, steps: Steps) -> None:
    async with steps("a user with a bound Telegram and a connected channel"):
        await sign_up_in_browser(page, unique_email("channels"))
        me = await call(page, "GET", "/v1/user")
        pid = (await call(page, "POST", "/v1/portfolios", {"name": "signals"}))["id"]
        chat = -100_000_000_000 - me["id"]
        async with web.app.state.ctx.transaction() as uow:
            uow.session.add(
                TelegramBinding(
                    user_id=me["id"], telegram_user_id=900_000 + me["id"], chat_id=me["id"]
                )
            )
            uow.session.add(TelegramChannel(chat_id=chat, user_id=me["id"], title="Ann signals"))
            uow.session.add(
                TelegramMessage(
                    chat_id=me["id"],
                    user_id=me["id"],
                    text="<b>BTCUSDT buy order filled</b>",
                    status="interrupted",
                    error="the sender stopped while sending it",
                )
            )
            mail_service.queue(uow, me["email"], "Weekly news", "Hello", user_id=me["id"])
        await page.goto("/app/inbox")
    async with steps("the channel trades the chosen portfolio"):
        channel = page.locator(f'#tg-channels li[data-chat="{chat}"]')
        await expect(channel).to_contain_text("Ann signals")
        await channel.get_by_label("Portfolio for Ann signals").select_option(str(pid))

        async def chosen() -> bool:
            listed = await call(page, "GET", "/v1/tg/channels")
            return bool(listed[0]["portfolio_id"] == pid)

        await _until(chosen, "the channel's portfolio was not saved")
    async with steps("the bot's history shows the interrupted message"):
        await page.get_by_text("What the bot sent you").click()
        item = page.locator('#tg-history li[data-status="interrupted"]')
        await expect(item).to_contain_text("BTCUSDT buy order filled")
        await expect(item).to_contain_text("the sender stopped while sending it")
    async with steps("email: a daily digest, and the mail history"):
        await page.get_by_label("Notification mail").select_option("daily")

        async def daily() -> bool:
            return bool((await call(page, "GET", "/v1/user/email"))["frequency"] == "daily")

        await _until(daily, "the frequency was not saved")
        await page.get_by_text("Mail sent to you").click()
        await expect(page.locator("#email-history li")).to_contain_text("Weekly news")
    async with steps("a Finnhub source: its secret once, an alert in its history"):
        await page.fill("#source-note", "BTC alerts")
        await page.get_by_role("button", name="Connect Finnhub").click()
        secret = await page.locator("#source-secret-value").text_content()
        assert secret
        source = page.locator("#sources li").filter(has_text="BTC alerts")
        url = await source.locator("code").text_content()
        assert url is not None
        async with httpx.AsyncClient() as finnhub:
            sent = await finnhub.post(
                url, json={"id": "w-1", "symbol": "BTCUSDT"}, headers={"X-Finnhub-Secret": secret}
            )
            assert sent.status_code == 200, sent.text
        await source.locator("select").first.select_option(str(pid))
        for _ in range(300):  # processed in the background: open the history once it is
            events = await call(page, "GET", f"/v1/webhook-sources/{url.rsplit('/', 1)[1]}/events")
            if events["events"] and events["events"][0]["processed_at"]:
                break
            await asyncio.sleep(0.1)
        await source.get_by_text("History").click()
        await expect(source.locator(".source-events li")).to_contain_text("notified")
