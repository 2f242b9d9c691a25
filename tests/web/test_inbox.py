"""The inbox page in a real browser: a new notification appears live with the bell's count,
marking it read clears the bell, and a channel checkbox changes the preference (the inbox of
security notices cannot be unchecked)."""

import asyncio

from playwright.async_api import Page, expect

from papertrade.notifications import service
from papertrade.notifications.kinds import Message
from tests.conftest import unique_email
from tests.web.conftest import Steps, WebApp, call, sign_up_in_browser


async def test_a_notification_arrives_live_and_is_marked_read(
    page: Page, web: WebApp, steps: Steps
) -> None:
    async with steps("sign up and open the inbox"):
        await sign_up_in_browser(page, unique_email("inbox"))
        me = await call(page, "GET", "/v1/user")
        await page.goto("/app/inbox")
        await expect(page.locator("#inbox-empty")).to_be_visible()
        await expect(page.locator("#tg-status")).to_have_text("Not linked.")
    async with steps("a notification arrives over the socket"):
        async with web.app.state.ctx.transaction() as uow:
            await service.notify_many(uow, [me["id"]], "system", Message("Welcome aboard", "Hi"))
        item = page.locator("#inbox-list li.unread")
        await expect(item).to_contain_text("Welcome aboard")
        await expect(page.locator("#inbox-count")).to_have_text("1")
    async with steps("mark it read"):
        await item.get_by_role("button", name="Mark read").click()
        await expect(page.locator("#inbox-list li.read")).to_contain_text("Welcome aboard")
        await expect(page.locator("#inbox-count")).to_be_hidden()
    async with steps("turn funding off in the inbox"):
        await page.get_by_label("funding by inbox").uncheck()
        for _ in range(600):  # the change is saved in the background
            if not await _funding_inbox(page):
                break
            await asyncio.sleep(0.05)
        assert await _funding_inbox(page) is False
        await page.reload()
        await expect(page.get_by_label("funding by inbox")).not_to_be_checked()
    async with steps("security notices cannot leave the inbox"):
        await expect(page.get_by_label("security by inbox")).to_be_checked()
        await expect(page.get_by_label("security by inbox")).to_be_disabled()
        await expect(page.get_by_label("security by email")).to_be_enabled()


async def _funding_inbox(page: Page) -> bool:
    prefs = await call(page, "GET", "/v1/inbox/preferences")
    return bool({p["kind"]: p for p in prefs["preferences"]}["funding"]["inbox"])
