"""Issue 33 point 12: on a phone the trading page's fixed chrome (whatever stays on screen while
the page scrolls: the top bar, the simulated-market banner, the view tabs, the Buy / Sell bar)
covers under 15 % of the screen's height, on a tall and a short phone, and what it holds still
works: the Buy / Sell bar opens the ticket, the menu is at the top of the page."""

from typing import Any

import pytest
from playwright.async_api import Browser, Page, ViewportSize, expect

from tests.conftest import unique_email
from tests.web.conftest import (
    ARTIFACTS,
    PHONE,
    Steps,
    WebApp,
    call,
    new_context,
    sign_up_in_browser,
)

SHORT_PHONE: ViewportSize = {"width": 390, "height": 664}

# Every element that is position: fixed or sticky, visible and on screen: its rectangle, clipped
# to the viewport. The share of the height is that of the union of their vertical extents.
FIXED_CHROME = """() => {
    const vh = innerHeight, found = [];
    for (const el of document.querySelectorAll('body *')) {
        const style = getComputedStyle(el);
        if (style.position !== 'fixed' && style.position !== 'sticky') continue;
        if (style.display === 'none' || style.visibility === 'hidden') continue;
        const r = el.getBoundingClientRect();
        const top = Math.max(0, r.top), bottom = Math.min(vh, r.bottom);
        if (r.width <= 0 || bottom - top <= 0) continue;
        found.push({what: el.id || el.className || el.tagName, top, bottom});
    }
    const spans = found.map((f) => [f.top, f.bottom]).sort((a, b) => a[0] - b[0]);
    let covered = 0, end = -1;
    for (const [top, bottom] of spans) {
        if (top > end) { covered += bottom - top; end = bottom; }
        else if (bottom > end) { covered += bottom - end; end = bottom; }
    }
    return {share: covered / vh, found};
}"""


async def chrome_at_middle(page: Page) -> dict[str, Any]:
    await page.evaluate(
        "window.scrollTo(0, (document.documentElement.scrollHeight - innerHeight) / 2)"
    )
    await page.wait_for_timeout(100)
    chrome: dict[str, Any] = await page.evaluate(FIXED_CHROME)
    return chrome


@pytest.mark.parametrize("viewport", [PHONE, SHORT_PHONE], ids=["390x844", "390x664"])
async def test_fixed_chrome_stays_under_15_percent_on_a_phone(
    browser: Browser, web: WebApp, viewport: ViewportSize
) -> None:
    context = await new_context(browser, web, viewport)
    page = await context.new_page()
    steps = Steps(page, f"phone-chrome-{viewport['height']}")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        async with steps("a portfolio's trading page on a phone"):
            await sign_up_in_browser(page, unique_email("phonechrome"))
            portfolio = await call(page, "POST", "/v1/portfolios", {"name": "Phone"})
            await page.goto(f"/app/portfolios/{portfolio['id']}")
            await expect(page.locator("#stat-equity")).not_to_have_text("—")
            # the market banner is there (the test app's feed is simulated)
            await expect(page.locator("#sim-banner")).to_be_visible()
            await expect(page.locator(".phone-bar")).to_be_visible()

        for view in ("chart", "trade", "positions"):
            async with steps(f"scrolled to the middle of the {view} view"):
                await page.locator(f".phone-tabs [data-phone-view={view}]").click()
                chrome = await chrome_at_middle(page)
                assert chrome["share"] < 0.15, chrome
                print(f"{viewport['height']} px, {view}: {chrome['share']:.1%}")  # noqa: T201
                await page.screenshot(
                    path=str(ARTIFACTS / f"phone-chrome-{viewport['height']}-{view}.png")
                )

        async with steps("the Buy / Sell bar still opens the ticket"):
            await page.locator(".phone-tabs [data-phone-view=chart]").click()
            await chrome_at_middle(page)
            await expect(page.locator(".phone-bar")).to_be_in_viewport()
            await page.locator(".phone-bar [data-phone-side=sell]").click()
            await expect(page.locator("#t-submit")).to_be_visible()
            await expect(page.locator("#t-submit")).to_contain_text("Sell")

        async with steps("the menu and the banner are at the top of the page"):
            await page.evaluate("window.scrollTo(0, 0)")
            await expect(page.get_by_role("navigation", name="Main")).to_be_in_viewport()
            await expect(page.locator("#sim-banner")).to_be_in_viewport()
            wide = await page.evaluate("document.documentElement.scrollWidth > innerWidth")
            assert not wide
        assert errors == []
    finally:
        await context.close()
