"""The dashboard and the portfolio page show the time-weighted return (issue 30, point 2): after a
small trade, a 95,000 USDT top-up leaves the Return the trade made. They used to compare equity
with the initial balance and showed +1900.19 %."""

import re

from playwright.async_api import Page, expect

from tests.conftest import unique_email
from tests.trading_api.helpers import set_price
from tests.web.conftest import WebApp, call, sign_up_in_browser

TRADE_RETURN = re.compile(r"^\+0\.1\d%$")  # +10 on 5,000 less two fees of about 0.3


async def shown(page: Page, portfolio_id: int) -> tuple[str, str]:
    """The Return on the dashboard's card and on the portfolio page."""
    await page.goto("/app")
    card = page.locator(f"article[data-portfolio-id='{portfolio_id}']")
    on_card = card.locator("dl div", has_text="Return").locator("dd")
    await expect(on_card).to_have_text(re.compile(r"%$"))
    card_text = await on_card.inner_text()
    await page.goto(f"/app/portfolios/{portfolio_id}")
    stat = page.locator("#stat-return")
    await expect(stat).to_have_text(re.compile(r"%$"))
    return card_text, await stat.inner_text()


async def test_a_top_up_is_not_a_return_on_the_dashboard_and_the_portfolio_page(
    page: Page, web: WebApp
) -> None:
    await sign_up_in_browser(page, unique_email("returns"))
    made = await call(
        page, "POST", "/v1/portfolios", {"name": "topped up", "initial_balance": "5000"}
    )
    pid = made["id"]
    await set_price(web.app, "BTCUSDT", "60000")
    trade = {"portfolio_id": pid, "symbol": "BTCUSDT", "type": "market", "quantity": "0.01"}
    await call(page, "POST", "/v1/order", trade | {"side": "buy"})
    await set_price(web.app, "BTCUSDT", "61000")
    await call(page, "POST", "/v1/order", trade | {"action": "close"})

    before = await shown(page, pid)
    assert before[0] == before[1] and TRADE_RETURN.match(before[0]), before
    await call(page, "POST", f"/v1/portfolios/{pid}/top-up", {"amount": "95000"})
    after = await shown(page, pid)
    assert after == before, (before, after)  # not +1900.19 %
    await expect(page.locator("#stat-equity")).to_contain_text("100,009")
