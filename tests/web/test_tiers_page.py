"""The tiers, side by side, from the pages alone (issue 33, point 3): a tier refusal links to
the tiers page (not to an API path), the page compares price, limits and what each unlocks, and
paying asks first."""

from pathlib import Path

import pytest
from playwright.async_api import Browser, Page, expect

from tests.conftest import unique_email
from tests.web.conftest import Steps, call, own_web, page_on, sign_up_in_browser


async def test_a_refusal_leads_to_the_tiers_compared_and_paying_asks_first(
    browser: Browser, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    async with (
        own_web("tiers_page", tmp_path, tiers_enforced=True) as web,
        page_on(browser, web, request) as page,
    ):
        await _journey(page, Steps(page, request.node.name))


async def _journey(page: Page, steps: Steps) -> None:
    async with steps("the free tier's third portfolio is refused with a link to the tiers"):
        await sign_up_in_browser(page, unique_email("tiers"))
        for name in ("One", "Two"):
            await call(page, "POST", "/v1/portfolios", {"name": name})
        await page.goto("/app")
        await page.fill("#pf-name", "Three")
        await page.click("#create-portfolio button[type=submit]")
        error = page.locator("#create-portfolio .form-error")
        await expect(error).to_contain_text("Upgrade to pro (10 portfolios) on the Tiers page.")
        assert "/v1/" not in (await error.text_content() or "")
        await error.get_by_role("link", name="Compare the tiers").click()
        await page.wait_for_url("**/tiers")

    async with steps("the tiers side by side: price, limits, what each unlocks"):
        table = page.locator("#tiers-table")
        await expect(table.locator("thead th")).to_have_text(
            ["What you get", "Free (yours)", "Pro", "Elite"]
        )
        price = table.locator("tbody tr", has_text="Price")
        await expect(price.locator("td")).to_have_text(
            ["free", "15.00 USDT / 30 days", "49.00 USDT / 30 days"]
        )
        python = table.locator("tbody tr", has_text="Python strategies")
        await expect(python.locator("td")).to_have_text(["no", "yes", "yes"])
        portfolios = table.locator("tbody tr", has_text="Portfolios")
        await expect(portfolios.locator("td").first).to_have_text("2")
        await expect(page.locator("#tiers-mine")).to_contain_text("Your tier: Free")

    async with steps("switching to Pro asks before paying; cancelled, nothing changes"):
        await page.get_by_role("button", name="Switch to Pro").click()
        confirm = page.get_by_role("dialog", name="Confirm")
        await expect(confirm).to_contain_text(
            "Pay 15.00 USDT from your wallet (0.00 USDT) for 30 days of Pro?"
        )
        await confirm.get_by_role("button", name="Cancel").click()
        await expect(page.locator("#tiers-mine")).to_contain_text("Your tier: Free")
        assert (await call(page, "GET", "/v1/launch/tiers/me"))["tier"] == "free"

    async with steps("the wallet links to the tiers"):
        await page.goto("/app/wallet")
        await page.get_by_role("link", name="Compare the tiers and change yours").click()
        await page.wait_for_url("**/tiers")
