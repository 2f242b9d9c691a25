"""The trader's screen, the tools test_trader_screen.py does not reach (issue 21, items 5, 8, 9):
take-profit limit orders from the ticket and the list of orders waiting for a trigger, closing
at a limit price, closing everything, the Funding and Ledger tabs, reduce-only and the % slider.
"""

import asyncio
import re
from decimal import Decimal

from playwright.async_api import Page, expect
from sqlalchemy import select

from papertrade.engine import risk
from papertrade.models import Order
from tests.conftest import unique_email
from tests.trading_api.helpers import set_price
from tests.web.conftest import Steps, WebApp, call, expect_toast, sign_up_in_browser


async def until_no_open_order(web: WebApp, portfolio_id: int, within: float = 30) -> None:
    deadline = asyncio.get_running_loop().time() + within
    while True:
        async with web.app.state.ctx.db.reader() as session:
            still = await session.scalar(
                select(Order.id).where(Order.portfolio_id == portfolio_id, Order.is_open.is_(True))
            )
        if still is None:
            return
        assert asyncio.get_running_loop().time() < deadline, f"order {still} still open"
        await asyncio.sleep(0.1)


FUNDING_DETAIL = "LINKUSDT funding at 2031-10-17 10:40, rate +0.1000%"
MS_TIMESTAMP = re.compile(r"\d{13}")


async def portfolio_page(page: Page, name: str, balance: str = "10000") -> int:
    """A new portfolio made through the API, its page open with the ticket ready."""
    made = await call(page, "POST", "/v1/portfolios", {"name": name, "initial_balance": balance})
    await page.goto(f"/app/portfolios/{made['id']}")
    await expect(page.locator("#t-symbol")).not_to_have_value("")
    return int(made["id"])


async def market_order(
    page: Page, portfolio_id: int, symbol: str, side: str, quantity: str
) -> None:
    body = {"portfolio_id": portfolio_id, "symbol": symbol, "side": side, "quantity": quantity}
    await call(page, "POST", "/v1/order", body | {"type": "market"})


async def test_a_take_profit_limit_order_waits_in_the_open_orders(
    page: Page, web: WebApp, steps: Steps
) -> None:
    await set_price(web.app, "BTCUSDT", "60000")
    async with steps("the ticket offers a take-profit limit, with a limit price"):
        await sign_up_in_browser(page, unique_email("tplimit"))
        await portfolio_page(page, "Targets")
        await page.select_option("#t-symbol", "BTCUSDT")
        await page.click('label[for="t-stop"]')
        await page.select_option("#t-stop-kind", "take_profit")
        await expect(page.locator("#t-price")).to_be_visible()
        await expect(page.locator("#t-trigger")).to_be_visible()

    async with steps("a sell take-profit at 62,000 limited at 62,100 is placed"):
        await page.click('label[for="t-sell"]')
        await page.select_option("#t-unit", "base")
        await page.fill("#t-size", "0.01")
        await page.fill("#t-trigger", "62000")
        await page.fill("#t-price", "62100")
        await page.click("#t-submit")
        await expect_toast(page, "take profit order waiting: sell 0.010 BTCUSDT at 62,000.0")

    async with steps("Open orders lists it as waiting for its trigger"):
        await expect(page.locator("#count-orders")).to_have_text("1")
        await page.click("#tab-orders")
        waiting = page.locator("#stops-table tbody tr")
        await expect(waiting).to_have_count(1)
        await expect(waiting.locator(".kind")).to_have_text("take profit")
        await expect(waiting.locator(".trigger")).to_have_text("62,000.0")
        await expect(waiting.locator(".limit")).to_have_text("62,100.0")
        await expect(waiting).to_contain_text("0.010")

    async with steps("Cancel takes it away"):
        await waiting.get_by_role("button", name="Cancel take profit sell BTCUSDT").click()
        await expect_toast(page, "take profit order cancelled")
        await expect(page.locator('[data-empty-for="stops-table"]')).to_be_visible()
        await expect(page.locator("#count-orders")).to_have_text("")


async def test_a_position_closes_at_a_limit_price_and_close_all_closes_the_rest(
    page: Page, web: WebApp, steps: Steps
) -> None:
    await set_price(web.app, "BTCUSDT", "60000")
    await set_price(web.app, "ETHUSDT", "3000")
    async with steps("three positions"):
        await sign_up_in_browser(page, unique_email("closing"))
        made = await call(page, "POST", "/v1/portfolios", {"name": "Closing"})
        await market_order(page, made["id"], "BTCUSDT", "buy", "0.05")
        await market_order(page, made["id"], "ETHUSDT", "sell", "1")
        await market_order(page, made["id"], "SOLUSDT", "buy", "2")
        await page.goto(f"/app/portfolios/{made['id']}")
        await expect(page.locator("#positions-table tbody tr")).to_have_count(3)

    async with steps("Close with a limit price rests a close order at that price"):
        row = page.locator('#positions-table tr[data-symbol="BTCUSDT"]')
        await row.get_by_role("button", name="Close BTCUSDT position").click()
        await expect(page.locator("#close-qty")).to_have_value("0.05")
        await page.fill("#close-price", "63000")
        await page.locator("#close-dialog").get_by_role("button", name="Close", exact=True).click()
        await expect_toast(page, "Close order placed at 63,000.0")
        await page.click("#tab-orders")
        resting = page.locator("#orders-table tbody tr")
        await expect(resting).to_have_count(1)
        await expect(resting).to_contain_text("sell (close)")
        await expect(resting).to_contain_text("63,000.0")

    async with steps("the mark reaches 63,000: the position is closed at the limit"):
        await set_price(web.app, "BTCUSDT", "63000")
        # First the engine (a failure here is not the page's), then the page: the fill is
        # pushed at once, and the page's 15-second safety read covers a push lost under load.
        await until_no_open_order(web, made["id"])
        await expect(row).to_have_count(0, timeout=20_000)
        await expect(page.locator("#orders-table")).to_be_hidden()
        await page.click("#tab-history")
        filled = page.locator("#history-table tbody tr", has_text="sell (close)")
        await expect(filled).to_contain_text("63,000.0")
        await expect(filled).to_contain_text("filled")

    async with steps("Close all asks first, then closes both others at market"):
        await page.click("#tab-positions")
        await page.click("#close-all")
        confirm = page.get_by_role("dialog", name="Confirm")
        await expect(confirm).to_contain_text("Close all 2 positions at market?")
        await confirm.get_by_role("button", name="Close all").click()
        await expect_toast(page, "All positions closed at market.")
        await expect(page.locator('[data-empty-for="positions-table"]')).to_be_visible()
        await expect(page.locator("#close-all")).to_be_hidden()


async def test_the_funding_and_ledger_tabs_list_balance_changes(
    page: Page, web: WebApp, steps: Steps
) -> None:
    await set_price(web.app, "LINKUSDT", "20")
    async with steps("a long of 100,000 USDT of LINK pays a 0.1 % funding"):
        await sign_up_in_browser(page, unique_email("funding"))
        made = await call(page, "POST", "/v1/portfolios", {"name": "Funding"})
        await market_order(page, made["id"], "LINKUSDT", "buy", "5000")
        # A funding time of its own, so no other test's LINKUSDT settlement stands in the way.
        await risk.settle_funding(
            web.app.state.ctx, "LINKUSDT", 1_950_000_000_000, Decimal("0.001"), Decimal("20")
        )
        await page.goto(f"/app/portfolios/{made['id']}")

    async with steps("Funding lists the payment with its balance after"):
        await page.click("#tab-funding")
        funding = page.locator("#funding-table tbody tr")
        await expect(funding).to_have_count(1)
        # 10,000 − 50 (taker fee on 100,000) − 100 (0.1 % of 100,000).
        await expect(funding.locator("td").nth(2)).to_have_text("-100.00")
        await expect(funding.locator("td").nth(3)).to_have_text("9,850.00")
        # When and at what rate in words (1,950,000,000,000 ms is 2031-10-17 10:40 UTC, the
        # browser's zone), never the raw millisecond timestamp of the ledger's note.
        await expect(funding.locator("td").nth(1)).to_have_text(FUNDING_DETAIL)
        assert not MS_TIMESTAMP.search(await page.locator("#funding-table").inner_text())

    async with steps("Ledger lists every change, newest first, with its kind"):
        await page.click("#tab-ledger")
        rows = page.locator("#ledger-table tbody tr")
        await expect(rows).to_have_count(3)
        await expect(rows.nth(0).locator("td").nth(1)).to_have_text("funding")
        await expect(rows.nth(0).locator("td").nth(2)).to_have_text(FUNDING_DETAIL)
        assert not MS_TIMESTAMP.search(await page.locator("#ledger-table").inner_text())
        await expect(rows.nth(1).locator("td").nth(1)).to_have_text("commission")
        await expect(rows.nth(1).locator("td").nth(3)).to_have_text("-50.00")
        await expect(rows.nth(1).locator("td").nth(4)).to_have_text("9,950.00")
        await expect(rows.nth(2).locator("td").nth(1)).to_have_text("deposit")
        await expect(rows.nth(2).locator("td").nth(3)).to_have_text("+10,000.00")


async def test_the_share_slider_sizes_an_order_and_reduce_only_shrinks_the_position(
    page: Page, web: WebApp, steps: Steps
) -> None:
    await set_price(web.app, "BTCUSDT", "60000")
    async with steps("the slider at 50 % sizes half the available margin"):
        await sign_up_in_browser(page, unique_email("slider"))
        await portfolio_page(page, "Slider", balance="1000")
        await page.select_option("#t-symbol", "BTCUSDT")
        slider = page.locator("#t-pct")
        await slider.fill("50")
        await expect(page.locator("#t-unit")).to_have_value("pct")
        await expect(page.locator("#t-size")).to_have_value("50")
        # 1,000 × 50 % × 20 / (1 + 20 × 0.0005) = 9,900.99 USDT → 0.165 BTC at 60,000.
        await expect(page.locator("#pv-quantity")).to_have_text("0.165 BTC")
        await page.click("#t-submit")
        await expect_toast(page, "Filled: buy 0.165 BTCUSDT")
        row = page.locator('#positions-table tr[data-symbol="BTCUSDT"]')
        await expect(row.locator("td").nth(2)).to_have_text("0.165")

    async with steps("reduce-only turns the ticket into a close of the position"):
        await page.check("#t-close")
        await expect(page.locator("#t-submit")).to_have_text("Close BTCUSDT")
        await expect(page.locator("#t-buy")).to_be_disabled()
        await expect(page.locator("#t-sell")).to_be_disabled()
        await expect(page.locator("#t-exits")).to_be_hidden()
        await page.select_option("#t-unit", "base")
        await page.fill("#t-size", "0.065")
        await page.click("#t-submit")
        await expect_toast(page, "Filled: sell 0.065 BTCUSDT")
        await expect(row.locator("td").nth(2)).to_have_text("0.100")
        await expect(row).to_contain_text("long")
