"""A live account's refused key says so in plain words (issue 33, point 11): what the exchange
said and what to check, never the signed request (its URL, timestamp or signature)."""

from playwright.async_api import Page, expect

from tests.conftest import unique_email
from tests.live.conftest import Exchange
from tests.live.conftest import exchange as exchange
from tests.web.conftest import WebApp, call, sign_up_in_browser
from tests.web.test_live_page import live_page as live_page
from tests.web.test_live_page import live_web as live_web


async def test_a_refused_key_is_explained_without_the_signed_request(
    live_page: Page, live_web: WebApp, exchange: Exchange
) -> None:
    page = live_page
    await sign_up_in_browser(page, unique_email("refused"))
    source = await call(page, "POST", "/v1/portfolios", {"name": "Paper"})
    await page.goto("/app/live")
    await page.fill("#live-label", "Sub")
    await page.fill("#live-key", exchange.api_key)
    await page.fill("#live-secret", "wrong secret")
    await page.select_option("#live-source", f"portfolio:{source['id']}")
    await page.click("#live-form button[type=submit]")
    error = page.locator("#live-form .form-error")
    await expect(error).to_contain_text("The exchange refused the key")
    await expect(error).to_contain_text("copied whole")
    said = await error.text_content() or ""
    for leaked in ("signature", "timestamp=", "http://", "https://", "/fapi/", exchange.api_key):
        assert leaked not in said, (leaked, said)
