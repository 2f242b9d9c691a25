"""The owner's Equity tab draws the curve across the chart, as the public page does (issue 33
point 8): the curve was squeezed against the right edge because the chart was sized while its
tab was hidden."""

import time
from decimal import Decimal
from typing import Any

from playwright.async_api import Browser, Page, ViewportSize, expect
from sqlalchemy import update

from papertrade.kit.time import now_ms
from papertrade.models import EquitySnapshot, LedgerEntry, Portfolio
from tests.conftest import unique_email
from tests.trading_api.helpers import set_price
from tests.web.conftest import (
    ARTIFACTS,
    DESKTOP,
    PHONE,
    Steps,
    WebApp,
    call,
    new_context,
    sign_up_in_browser,
)

# The horizontal extent of the drawn curve in a chart's pane, read from its pixels: the first
# and last columns holding the line's colour (the accent blue), against the pane's width.
CURVE_EXTENT = """(selector) => {
    const canvases = [...document.querySelectorAll(`${selector} canvas`)];
    const pane = canvases.reduce((a, b) => (b.width * b.height > a.width * a.height ? b : a));
    const { width, height } = pane;
    const data = pane.getContext('2d').getImageData(0, 0, width, height).data;
    let left = -1;
    let right = -1;
    for (let x = 0; x < width; x += 1) {
        // the line and its filled area: a column of blue, not the one-pixel dotted line of
        // the last value that crosses the whole pane
        let blue = 0;
        for (let y = 0; y < height; y += 1) {
            const i = (y * width + x) * 4;
            if (data[i + 3] > 40 && data[i + 2] > data[i] + 60) blue += 1;
        }
        if (blue >= 6) {
            if (left < 0) left = x;
            right = x;
        }
    }
    return { left, right, width };
}"""


async def curve_extent(page: Page, selector: str) -> dict[str, Any]:
    """The curve's extent once it is drawn across the chart, or as it is after 10 s: a chart
    draws a frame after its data arrives, later on a busy machine."""
    deadline = time.monotonic() + 10
    while True:
        extent: dict[str, Any] = await page.evaluate(CURVE_EXTENT, selector)
        across = extent["left"] >= 0 and extent["right"] - extent["left"] > 0.6 * extent["width"]
        if across or time.monotonic() > deadline:
            return extent
        await page.wait_for_timeout(100)


HOUR_MS = 3_600_000


async def a_traded_portfolio(page: Page, web: WebApp) -> dict[str, Any]:
    """A public portfolio made three days ago with hourly equity marks (as the equity job
    writes them) and a few fills since."""
    made: dict[str, Any] = await call(
        page, "POST", "/v1/portfolios", {"name": "Curve", "visibility": "public"}
    )
    now = now_ms()
    then = now - 72 * HOUR_MS
    async with web.app.state.ctx.transaction() as uow:
        for table in (Portfolio, LedgerEntry):
            key = Portfolio.id if table is Portfolio else LedgerEntry.portfolio_id
            await uow.session.execute(
                update(table).where(key == made["id"]).values(created_at=then)
            )
        for hour in range(1, 72):
            equity = Decimal(10_000 + 40 * (hour % 12) - 3 * hour)
            uow.session.add(
                EquitySnapshot(
                    portfolio_id=made["id"],
                    time=then + hour * HOUR_MS,
                    balance=equity,
                    equity=equity,
                )
            )
    await set_price(web.app, "SOLUSDT", "150")
    for side, price in (("buy", "150"), ("sell", "151"), ("buy", "149"), ("sell", "152")):
        await set_price(web.app, "SOLUSDT", price)
        order = {"portfolio_id": made["id"], "symbol": "SOLUSDT", "side": side, "quantity": "2"}
        await call(page, "POST", "/v1/order", order)
    return made


async def check_equity_tab(browser: Browser, web: WebApp, viewport: ViewportSize) -> None:
    context = await new_context(browser, web, viewport)
    page = await context.new_page()
    steps = Steps(page, f"equity-tab-{viewport['width']}")
    try:
        async with steps("a portfolio that traded"):
            await sign_up_in_browser(page, unique_email("equitytab"))
            made = await a_traded_portfolio(page, web)
        async with steps("the public page draws the curve across its chart"):
            await page.goto(f"/p/{made['code']}")
            await expect(page.locator("#pub-curve canvas").first).to_be_visible()
            public = await curve_extent(page, "#pub-curve")
            assert public["right"] - public["left"] > 0.6 * public["width"], public
        async with steps("the owner's Equity tab draws it across the chart too"):
            await page.goto(f"/app/portfolios/{made['id']}")
            await expect(page.locator("#t-symbol")).not_to_have_value("")
            if viewport["width"] < 600:
                await page.locator(".phone-tabs").get_by_role("button", name="Chart").click()
            await page.click("#tab-equity")
            await expect(page.locator("#equity-chart canvas").first).to_be_visible()
            owner = await curve_extent(page, "#equity-chart")
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            card = ARTIFACTS / f"equity-tab-{viewport['width']}--chart.png"
            await page.locator(".chart-card").screenshot(path=str(card))
            assert owner["left"] >= 0, owner
            assert owner["right"] - owner["left"] > 0.6 * owner["width"], owner
            # it starts near the left edge, not squeezed against the right one
            assert owner["left"] < 0.25 * owner["width"], owner
    finally:
        await context.close()


async def test_the_equity_tab_draws_the_curve_across_the_chart(
    browser: Browser, web: WebApp
) -> None:
    await check_equity_tab(browser, web, DESKTOP)


async def test_the_equity_tab_draws_the_curve_across_the_chart_on_a_phone(
    browser: Browser, web: WebApp
) -> None:
    await check_equity_tab(browser, web, PHONE)
