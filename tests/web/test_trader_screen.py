"""The trader's screen (issue 21, items 7-11): the ticket's live preview, the price chart with the
portfolio's fills and lines, position tools, order history, plain errors and the phone layout."""

from playwright.async_api import Browser, Page, expect

from tests.conftest import unique_email
from tests.trading_api.helpers import set_price
from tests.web.conftest import (
    PHONE,
    Steps,
    WebApp,
    call,
    expect_toast,
    new_context,
    sign_up_in_browser,
)


async def open_portfolio(page: Page, name: str, balance: str = "10000") -> None:
    await page.fill("#pf-name", name)
    await page.fill("#pf-balance", balance)
    await page.press("#pf-name", "Enter")
    await page.wait_for_url("**/app/portfolios/*")
    await expect(page.locator("#t-symbol")).not_to_have_value("")


async def place_in_ticket(page: Page, selector: str) -> float:
    """How far below the top of the order ticket the element is, in CSS pixels."""
    return float(
        await page.locator(selector).evaluate(
            "(el) => el.getBoundingClientRect().top"
            " - el.closest('.ticket').getBoundingClientRect().top"
        )
    )


async def test_the_ticket_previews_what_is_sent_and_the_chart_shows_it(
    page: Page, web: WebApp, steps: Steps
) -> None:
    await set_price(web.app, "BTCUSDT", "60000")

    async with steps("a new portfolio; the ticket states the minimum order"):
        await sign_up_in_browser(page, unique_email("screen"))
        guide = page.locator("#pf-empty")
        await expect(guide).to_contain_text("Start trading on paper in three steps")
        await expect(guide.locator("li")).to_have_count(3)
        await open_portfolio(page, "Screen", balance="1000")
        await page.select_option("#t-symbol", "BTCUSDT")
        # BTCUSDT: step 0.001, min notional 100 USDT → 0.002 BTC at 60,000.
        await expect(page.locator("#t-minimum")).to_contain_text("min 0.002 BTC ≈ 120.00 USDT")
        await expect(page.locator("#pv-available")).to_have_text("1,000.00 USDT")

    async with steps("typing a USDT size shows the quantity after step rounding, cost, fee"):
        await page.fill("#t-size", "1000")
        await expect(page.locator("#pv-quantity")).to_have_text("0.016 BTC")
        await expect(page.locator("#pv-notional")).to_have_text("960.00 USDT")
        await expect(page.locator("#pv-margin")).to_have_text("48.00 USDT at 20×")
        await expect(page.locator("#pv-fee")).to_contain_text("0.48 USDT")
        await expect(page.locator("#pv-liq")).not_to_have_text("—")
        await expect(page.locator("#t-problems")).to_have_text("")

    async with steps("too small says so before sending; Max sizes to the available margin"):
        await page.fill("#t-size", "50")
        await expect(page.locator("#t-problems")).to_contain_text("Below the minimum order")
        await page.click("#t-max")
        await expect(page.locator("#t-unit")).to_have_value("pct")
        await expect(page.locator("#t-size")).to_have_value("100")
        # 1,000 × 20 / (1 + 20 × 0.0005) = 19,801.98 USDT → 0.330 BTC at 60,000.
        await expect(page.locator("#pv-quantity")).to_have_text("0.330 BTC")
        await expect(page.locator("#t-problems")).to_have_text("")

    async with steps("a market buy with a take-profit and a stop-loss"):
        await page.select_option("#t-unit", "base")
        await page.fill("#t-size", "0.05")
        await page.click("#t-exits summary")
        await page.fill("#t-tp", "66000")
        await page.fill("#t-sl", "57000")
        before_fill = await place_in_ticket(page, "#t-submit")
        await page.click("#t-submit")
        await expect_toast(page, "with TP 66,000.0 and SL 57,000.0")
        # The ticket has seen the new position (its margin type is locked now), and the hints
        # that changed with it moved nothing: the next click lands on the button too.
        await expect(page.locator("#t-margin-type")).to_be_disabled()
        held_hint = page.locator('#mt-hint [data-when="held"]')
        await expect(held_hint).to_be_visible()
        await expect(held_hint).to_have_text(
            "Close the BTCUSDT position to change its margin type."
        )
        await expect(page.locator('#mt-hint [data-when="free"]')).to_be_hidden()
        assert await place_in_ticket(page, "#t-submit") == before_fill

    async with steps("the chart marks the fill and draws entry, TP, SL and liquidation"):
        summary = page.locator("#chart-summary")
        await expect(summary).to_contain_text("BTCUSDT")
        await expect(summary).to_contain_text("1 fill marked")
        await expect(summary).to_contain_text("entry 60,000.0")
        await expect(summary).to_contain_text("take-profit 66,000.0")
        await expect(summary).to_contain_text("stop-loss 57,000.0")
        # 998.50 USDT (after the 1.50 fee) behind 0.05 BTC:
        # 998.5 + 0.05 × (P − 60,000) = 0.4 % × 0.05 × P at P = 40,190.76…, shown up to the tick.
        await expect(summary).to_contain_text("liquidation 40,190.8")
        await expect(page.locator("#price-chart canvas").first).to_be_visible()

    async with steps("the position shows notional, ROE, margin ratio and its TP/SL"):
        row = page.locator('#positions-table tr[data-symbol="BTCUSDT"]')
        # Maintenance 0.4 % × 3,000 = 12 against equity 998.50: 1.20 %.
        await expect(page.locator("#stat-ratio")).to_have_text("1.20%")
        await expect(row.locator(".notional")).to_have_text("3,000.00")
        await expect(row.locator(".tpsl")).to_have_text("66,000.0 / 57,000.0")
        await set_price(web.app, "BTCUSDT", "61200")
        # +60 USDT on 150 USDT of margin (3,000 / 20).
        await expect(row.locator(".upnl")).to_have_text("+60.00")
        await expect(row.locator(".roe")).to_have_text("+40.00%")

    async with steps("a limit order rests and is drawn as a line"):
        await page.click('label[for="t-limit"]')
        await page.fill("#t-price", "55000")
        before = await place_in_ticket(page, "#t-submit")
        await page.fill("#t-size", "0.01")
        await expect(page.locator("#pv-quantity")).to_have_text("0.010 BTC")
        # The preview lands a moment after the keystroke and its lines wrap: the button the
        # pointer is heading for stays where it was.
        assert await place_in_ticket(page, "#t-submit") == before
        await page.click("#t-submit")
        await expect_toast(page, "Limit order placed")
        await expect(page.locator("#chart-summary")).to_contain_text("order 55,000.0")
        await page.click('label[for="t-market"]')

    async with steps("close half of the position from its row"):
        await row.get_by_role("button", name="Close BTCUSDT position").click()
        dialog = page.locator("#close-dialog")
        await expect(dialog).to_be_visible()
        await page.click('label[for="close-50"]')
        await expect(page.locator("#close-qty")).to_have_value("0.025")
        await dialog.get_by_role("button", name="Close", exact=True).click()
        await expect_toast(page, "Closed 0.025 BTCUSDT")
        await expect(row.locator("td").nth(2)).to_have_text("0.025")

    async with steps("cancelled orders are in the order history with their reason"):
        await page.click("#tab-orders")
        await (
            page.locator("#orders-table tbody tr")
            .first.get_by_role("button", name="Cancel")
            .click()
        )
        await page.click("#tab-history")
        cancelled = page.locator("#history-table tbody tr", has_text="canceled")
        await expect(cancelled.first).to_contain_text("55,000.0")

    async with steps("a stop-market order from the ticket waits for its trigger"):
        await page.click('label[for="t-stop"]')
        await page.select_option("#t-stop-kind", "stop_market")
        await page.click('label[for="t-sell"]')
        await page.select_option("#t-unit", "base")
        await page.fill("#t-size", "0.01")
        await page.fill("#t-trigger", "59000")
        await page.click("#t-submit")
        await expect_toast(page, "stop market order waiting: sell 0.010 BTCUSDT at 59,000.0")


async def test_validation_errors_read_as_words(page: Page, web: WebApp, steps: Steps) -> None:
    async with steps("a starting balance that is not a number"):
        await sign_up_in_browser(page, unique_email("words"))
        await page.fill("#pf-name", "Words")
        await page.fill("#pf-balance", "ten thousand")
        await page.press("#pf-name", "Enter")
        error = page.locator("#create-portfolio .form-error")
        await expect(error).to_have_text("Initial balance must be a number, like 12.5.")
        await expect(page.locator("#pf-balance")).to_have_attribute("aria-invalid", "true")


async def test_the_phone_layout_is_trade_first(browser: Browser, web: WebApp) -> None:
    await set_price(web.app, "ETHUSDT", "3000")
    context = await new_context(browser, web, viewport=PHONE)
    page = await context.new_page()
    steps = Steps(page, "test_the_phone_layout_is_trade_first")
    try:
        async with steps("the chart shows first, with a Buy / Sell bar"):
            await sign_up_in_browser(page, unique_email("phone"))
            await open_portfolio(page, "Phone")
            await expect(page.locator("#price-chart")).to_be_visible()
            await expect(page.locator("#ticket")).to_be_hidden()
            await expect(page.locator(".phone-bar")).to_be_visible()
        async with steps("Sell opens the ticket on the sell side"):
            await page.locator(".phone-bar").get_by_role("button", name="Sell / Short").click()
            await expect(page.locator("#ticket")).to_be_visible()
            await expect(page.locator("#price-chart")).to_be_hidden()
            await expect(page.locator("#t-sell")).to_be_checked()
            await expect(page.locator("#t-size")).to_be_focused()
            await page.select_option("#t-symbol", "ETHUSDT")
            await page.select_option("#t-unit", "base")
            await page.fill("#t-size", "0.1")
            await page.click("#t-submit")
            await expect_toast(page, "Filled")
        async with steps("the positions view lists the short, with its Close button named"):
            await page.locator(".phone-tabs").get_by_role("button", name="Positions").click()
            row = page.locator('#positions-table tr[data-symbol="ETHUSDT"]')
            await expect(row).to_contain_text("short")
            await expect(row.get_by_role("button", name="Close ETHUSDT position")).to_be_visible()
            # Nothing is cut off sideways: the page is no wider than the phone.
            width = await page.evaluate("document.documentElement.scrollWidth")
            assert width <= PHONE["width"], width
            await steps.screenshot("phone-positions")
    finally:
        await context.close()


async def test_the_public_page_shows_the_equity_curve_and_open_positions(
    page: Page, web: WebApp, steps: Steps
) -> None:
    await set_price(web.app, "SOLUSDT", "150")
    async with steps("a public portfolio with a short"):
        await sign_up_in_browser(page, unique_email("public"))
        made = await call(
            page, "POST", "/v1/portfolios", {"name": "Open book", "visibility": "public"}
        )
        order = {"portfolio_id": made["id"], "symbol": "SOLUSDT", "side": "sell", "quantity": "2"}
        await call(page, "POST", "/v1/order", order)
    async with steps("anyone sees its curve and its position"):
        await page.goto(f"/p/{made['code']}")
        row = page.locator('#pub-positions tr[data-symbol="SOLUSDT"]')
        await expect(row).to_contain_text("short")
        await expect(row.locator("td").nth(2)).to_contain_text("2")
        await expect(page.locator("#pub-curve canvas").first).to_be_visible()
