"""A portfolio's realism profile is chosen and shown in the web app (issue 21 item 6)."""

from playwright.async_api import Page, expect

from tests.conftest import unique_email
from tests.web.conftest import Steps, WebApp, call, expect_toast, sign_up_in_browser


async def test_a_realistic_portfolio_is_created_shown_and_changed_from_the_web(
    page: Page, web: WebApp, steps: Steps
) -> None:
    async with steps("the create form offers the profile, with what it means"):
        await sign_up_in_browser(page, unique_email("realism"))
        await expect(page.locator("#pf-realism")).to_have_value("mark")
        await expect(page.locator("#pf-realism-hint")).to_contain_text("slippage")
        await page.fill("#pf-name", "Real book")
        await page.select_option("#pf-realism", "realistic")
        await page.click("#create-portfolio button[type=submit]")
        await page.wait_for_url("**/app/portfolios/*")

    async with steps("its page says fills are realistic and what that does"):
        shown = page.locator("#pf-realism")
        await expect(page.locator("#pf-realism-name")).to_have_text("realistic")
        await expect(shown).to_contain_text("pay slippage that grows with their size")
        await expect(shown).to_contain_text("large limit orders fill in parts")
        portfolio_id = int(page.url.rstrip("/").rsplit("/", 1)[1])
        assert (await call(page, "GET", f"/v1/portfolios/{portfolio_id}"))["realism"] == "realistic"

    async with steps("the Details form shows it and switches it back to the mark"):
        await expect(page.locator("#set-realism")).to_have_value("realistic")
        await page.select_option("#set-realism", "mark")
        await page.locator("#settings-form").get_by_role("button", name="Save").click()
        await expect_toast(page, "Saved")
        await expect(page.locator("#pf-realism-name")).to_have_text("at the mark")
        await expect(page.locator("#pf-realism")).to_contain_text("no slippage")
        assert (await call(page, "GET", f"/v1/portfolios/{portfolio_id}"))["realism"] == "mark"
