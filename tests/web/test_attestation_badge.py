"""The public portfolio page shows the attested track record's badge and links to the proofs."""

from playwright.async_api import Page, expect

from papertrade.chain.proofs import utc_day
from papertrade.kit.time import now_ms
from tests.chain.helpers import chained, fake_calendar, seal_today
from tests.conftest import unique_email
from tests.trading_api.helpers import set_price
from tests.web.conftest import WebApp, call, sign_up_in_browser


async def test_the_public_page_says_verified_through_the_anchored_day(
    page: Page, web: WebApp
) -> None:
    await set_price(web.app, "BTCUSDT", "60000")
    await sign_up_in_browser(page, unique_email("badge"))
    portfolio = await call(
        page, "POST", "/v1/portfolios", {"name": "Attested", "visibility": "public"}
    )
    code = portfolio["code"]
    await page.goto(f"{web.url}/p/{code}")
    await expect(page.locator("#pub-attest-badge")).to_have_text("No trades yet")

    order = {"portfolio_id": portfolio["id"], "symbol": "BTCUSDT", "side": "buy"}
    await call(page, "POST", "/v1/order", {**order, "type": "market", "quantity": "0.01"})
    await chained(web.app)
    await page.goto(f"{web.url}/p/{code}")
    await expect(page.locator("#pub-attest-badge")).to_contain_text("first daily root pending")
    async with fake_calendar() as calendar:
        await seal_today(web.app, [calendar.url])
    today = utc_day(now_ms())
    await page.goto(f"{web.url}/p/{code}")
    badge = page.locator("#pub-attest-badge")
    await expect(badge).to_have_text(f"✓ Track record verified through {today}")
    await expect(page.locator("#pub-attest-root")).to_have_attribute(
        "href", f"/v1/chain/roots/{today}"
    )
    await expect(page.locator("#pub-attest-events")).to_have_attribute(
        "href", f"/v1/chain/portfolios/{code}/events"
    )
