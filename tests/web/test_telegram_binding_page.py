"""Linking Telegram from the inbox page in headless Chromium, against the fake Bot API
(tests/fakes/telegram_api.py): Link Telegram shows the https://t.me/<bot>?start=<code> deep link
and its QR code, and once the bot's webhook has bound the account (the user tapped Start in
Telegram) the page says it is linked, without a reload (docs/notifications.md)."""

import re
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from playwright.async_api import Browser, Page, expect

from tests.conftest import unique_email
from tests.fakes.telegram_api import TOKEN, FakeTelegram, fake_telegram
from tests.telegram.helpers import SECRET, message_update
from tests.web.conftest import Steps, WebApp, expect_toast, own_web, page_on, sign_up_in_browser

DEEP_LINK = re.compile(r"^https://t\.me/pt_bot\?start=([A-Za-z0-9_-]{1,64})$")


@pytest.fixture
async def bot_web(tmp_path: Path) -> AsyncIterator[tuple[WebApp, FakeTelegram]]:
    """An app whose bot is the fake Bot API's `pt_bot`."""
    async with (
        fake_telegram() as fake,
        own_web(
            "telegram",
            tmp_path,
            telegram_bot_token=TOKEN,
            telegram_bot_username="pt_bot",
            telegram_webhook_secret=SECRET,
            telegram_api_base_url=fake.base_url,
        ) as served,
    ):
        yield served, fake


@pytest.fixture
async def bot_page(
    browser: Browser, bot_web: tuple[WebApp, FakeTelegram], request: pytest.FixtureRequest
) -> AsyncIterator[Page]:
    async with page_on(browser, bot_web[0], request) as opened:
        yield opened


async def test_the_deep_link_and_its_qr_code_bind_telegram(
    bot_page: Page, bot_web: tuple[WebApp, FakeTelegram], request: pytest.FixtureRequest
) -> None:
    page, (web, fake) = bot_page, bot_web
    steps = Steps(page, request.node.name)
    async with steps("the inbox says Telegram is not linked"):
        await sign_up_in_browser(page, unique_email("telegram"))
        await page.goto("/app/inbox")
        await expect(page.locator("#tg-status")).to_have_text("Not linked.")
        await expect(page.locator("#tg-open")).to_be_hidden()

    async with steps("Link Telegram shows the deep link the API made"):
        async with page.expect_response("**/v1/tg/link") as made:
            await page.get_by_role("button", name="Link Telegram").click()
        link = await (await made.value).json()
        found = DEEP_LINK.match(link["url"])
        assert found is not None, link["url"]
        code = found.group(1)
        anchor = page.locator("#tg-url")
        await expect(anchor).to_be_visible()
        await expect(anchor).to_have_text(link["url"])
        await expect(anchor).to_have_attribute("href", link["url"])

    async with steps("and the QR code of that same link, drawn"):
        qr = page.get_by_role("img", name="QR code of the Telegram link")
        await expect(qr).to_be_visible()
        await expect(qr).to_have_attribute("src", link["qr_svg"])
        assert link["qr_svg"].startswith("data:image/svg+xml")
        await qr.evaluate(
            """img => img.complete && img.naturalWidth > 0 ? null : new Promise((ok, fail) => {
                img.addEventListener('load', ok, { once: true });
                img.addEventListener('error', () => fail(new Error('the QR code did not load')));
            })"""
        )
        assert await qr.evaluate("img => img.naturalWidth") > 0
        box = await qr.bounding_box()
        assert box is not None and box["width"] >= 100 and box["height"] >= 100, box

    async with steps("the user taps Start in Telegram: the bot's webhook binds the account"):
        start = message_update(f"/start {code}", tg_user=4242)
        async with httpx.AsyncClient(base_url=web.url, timeout=30) as telegram:
            answer = await telegram.post(
                "/v1/webhook/tg", json=start, headers={"X-Telegram-Bot-Api-Secret-Token": SECRET}
            )
        assert answer.status_code == 200, answer.text
        (reply,) = await fake.wait_for(1, within=30)
        assert reply.chat_id == 4242 and reply.text.startswith("Linked to ")

    async with steps("the page says it is linked, without a reload"):
        await expect(page.locator("#tg-status")).to_have_text("Linked to @ann.", timeout=30_000)
        await expect_toast(page, "Telegram linked to @ann.")
        await expect(page.locator("#tg-open")).to_be_hidden()  # the link is used up
        await expect(page.get_by_role("button", name="Unlink")).to_be_visible()
        await expect(page.locator("#tg-signals")).to_be_visible()
