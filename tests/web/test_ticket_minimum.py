"""The ticket and the server agree on the minimum (issue 33, point 6): under the minimum the
ticket states it and its button waits; at the minimum the server takes the order; amounts in
its warnings read as the app's other amounts (cents, thousands separators)."""

import re

from playwright.async_api import Page, expect

from tests.conftest import unique_email
from tests.trading_api.helpers import set_price
from tests.web.conftest import Steps, WebApp, call, expect_toast, sign_up_in_browser


async def test_buy_waits_under_the_minimum_and_warnings_read_as_amounts(
    page: Page, web: WebApp, steps: Steps
) -> None:
    await set_price(web.app, "BTCUSDT", "60000")
    async with steps("a portfolio's ticket on BTCUSDT states the minimum"):
        await sign_up_in_browser(page, unique_email("minimum"))
        made = await call(
            page, "POST", "/v1/portfolios", {"name": "Min", "initial_balance": "1000"}
        )
        await page.goto(f"/app/portfolios/{made['id']}")
        await expect(page.locator("#t-symbol")).not_to_have_value("")
        await page.select_option("#t-symbol", "BTCUSDT")
        await page.select_option("#t-unit", "base")
        # step 0.001, min notional 100 USDT: 0.002 BTC at 60,000
        await expect(page.locator("#t-minimum")).to_contain_text("min 0.002 BTC ≈ 120.00 USDT")

    async with steps("under the minimum, Buy waits and the ticket says why"):
        await page.fill("#t-size", "0.001")
        problems = page.locator("#t-problems")
        await expect(problems).to_contain_text("Below the minimum order: 0.002 BTC ≈ 120.00 USDT")
        await expect(page.locator("#t-submit")).to_be_disabled()

    async with steps("at the minimum Buy works, and the server takes the order"):
        await page.fill("#t-size", "0.002")
        await expect(problems).to_have_text("")
        await expect(page.locator("#t-submit")).to_be_enabled()
        await page.click("#t-submit")
        await expect_toast(page, "Filled: buy 0.002 BTCUSDT")

    async with steps("too large: the margin warning reads in cents with separators"):
        await page.fill("#t-size", "1")
        await expect(problems).to_contain_text("Needs 3,030.00 USDT of margin and fee")
        text = await problems.text_content() or ""
        available = re.search(r"; ([\d,]+\.\d\d) USDT is available\.", text)
        assert available, text
