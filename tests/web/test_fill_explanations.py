"""The portfolio page's fills table says why each fill has its price (issue 21 item 6)."""

from playwright.async_api import Page, expect

from tests.conftest import unique_email
from tests.trading_api.helpers import set_price
from tests.web.conftest import WebApp, call, sign_up_in_browser


async def test_each_fill_shows_its_price_source_and_slippage(page: Page, web: WebApp) -> None:
    await set_price(web.app, "BTCUSDT", "60000")
    await sign_up_in_browser(page, unique_email("why"))
    portfolio = await call(
        page,
        "POST",
        "/v1/portfolios",
        {"name": "realistic", "realism": "realistic", "initial_balance": 1_000_000},
    )
    order = {"portfolio_id": portfolio["id"], "symbol": "BTCUSDT", "type": "market"}
    await call(page, "POST", "/v1/order", order | {"side": "buy", "quantity": "10"})
    await page.goto(f"/app/portfolios/{portfolio['id']}")
    await page.click("#tab-fills")
    why = page.locator("#fills-table tbody tr .fill-why")
    await expect(why).to_have_count(1)
    await expect(why).to_have_text("mark +5.48 bps")
    title = await why.get_attribute("title")
    assert title is not None
    for part in ("price from the mark", "mark then 60,000.0", "slippage 5.48 bps", "taker"):
        assert part in title, title
    assert "latency 50 ms" in title
