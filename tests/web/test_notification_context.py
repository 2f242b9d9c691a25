"""Issue 33, point 5: a notification names its portfolio and links to it, and its amounts read
as the rest of the app's (thousand separators, 2 decimals for USDT, the instrument's precision
for prices)."""

from playwright.async_api import Page, expect

from tests.conftest import unique_email
from tests.trading_api.helpers import set_price
from tests.web.conftest import WebApp, call, sign_up_in_browser


async def test_a_fill_notification_names_its_portfolio_and_reads_like_the_app(
    page: Page, web: WebApp
) -> None:
    await sign_up_in_browser(page, unique_email("context"))
    first = await call(
        page, "POST", "/v1/portfolios", {"name": "Swing book", "initial_balance": "100000"}
    )
    await call(page, "POST", "/v1/portfolios", {"name": "Scalps"})  # two cannot be told apart
    await set_price(web.app, "ETHUSDT", "3302.09")
    order = {"symbol": "ETHUSDT", "side": "buy", "type": "market", "quantity": "1.5"}
    await call(page, "POST", "/v1/order", {"portfolio_id": first["id"], **order})

    await page.goto("/app/inbox")
    note = page.locator("#inbox-list > li").filter(has_text="ETHUSDT buy order filled")
    # 1.5 × 3,302.09 = 4,953.135 of notional; the taker fee (0.05 %) 2.4765675 → 2.48 USDT.
    await expect(note).to_contain_text("Bought 1.5 ETHUSDT at 3,302.09")
    await expect(note).to_contain_text("commission 2.48 USDT.")
    link = note.get_by_role("link", name=f"Portfolio Swing book ({first['code']})")
    await expect(link).to_have_attribute("href", f"/app/portfolios/{first['id']}")
    await link.click()
    await page.wait_for_url(f"**/app/portfolios/{first['id']}")
