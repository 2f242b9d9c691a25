"""The portfolio page offers Cross / Isolated beside leverage, for the ticket's symbol."""

from playwright.async_api import Page, expect

from tests.conftest import unique_email
from tests.trading_api.helpers import set_price
from tests.web.conftest import WebApp, call, expect_toast, sign_up_in_browser


async def test_the_ticket_sets_a_symbol_isolated_and_its_position_shows_it(
    page: Page, web: WebApp
) -> None:
    await set_price(web.app, "BTCUSDT", "60000")
    await sign_up_in_browser(page, unique_email("margin"))
    portfolio = await call(page, "POST", "/v1/portfolios", {"name": "Isolated"})
    pid = portfolio["id"]
    await page.goto(f"/app/portfolios/{pid}")
    await page.select_option("#t-symbol", "BTCUSDT")
    await expect(page.locator("#mt-symbol")).to_have_text("BTCUSDT")
    select = page.get_by_label("Margin for BTCUSDT")
    await select.select_option("isolated")
    await expect_toast(page, "BTCUSDT is now isolated margin")

    order = {"portfolio_id": pid, "symbol": "BTCUSDT", "type": "market", "side": "buy"}
    await call(page, "POST", "/v1/order", {**order, "quantity": "0.01"})
    (position,) = await call(page, "GET", f"/v1/portfolios/{pid}/positions")
    assert position["margin_type"] == "isolated" and position["isolated_margin"] == 30
    await page.reload()
    await page.select_option("#t-symbol", "BTCUSDT")
    await expect(select).to_have_value("isolated")
    await expect(select).to_be_disabled()  # an open position keeps its margin type
