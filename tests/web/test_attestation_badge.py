"""The public portfolio page shows the attested track record's badge and links to its
track-record page, which a person can check it from: status, the latest root with its
signature, each recent fill with its proof, and the command that verifies it."""

import re

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
    await expect(page.locator("#pub-attest-badge")).to_contain_text("first anchored root pending")
    async with fake_calendar() as calendar:
        await seal_today(web.app, [calendar.url])
    today = utc_day(now_ms())
    await page.goto(f"{web.url}/p/{code}")
    badge = page.locator("#pub-attest-badge")
    await expect(badge).to_have_text(f"✓ Track record verified through {today}")
    await page.click("#pub-attest-record")
    await expect(page).to_have_url(f"{web.url}/p/{code}/track-record")
    await expect(page.locator("#tr-status")).to_contain_text(f"Verified through {today}")
    await expect(page.locator("#tr-status")).to_contain_text("all 2 events")
    signature = page.locator("#tr-signature")
    await expect(signature).to_have_text(re.compile(r"^[0-9a-f]{128}$"))
    rows = page.locator("#tr-events tbody tr")
    await expect(rows).to_have_count(2)  # the opening deposit and the fill, newest first
    await expect(rows.first).to_contain_text("buy 0.01 BTCUSDT at 60000")
    proof = rows.first.locator("a")
    await expect(proof).to_have_text("proof")
    await expect(proof).to_have_attribute("href", f"/v1/chain/portfolios/{code}/events/2/proof")
    await expect(page.locator("#tr-command")).to_have_text(
        f"papertrade verify {code} --url {web.url}"
    )
