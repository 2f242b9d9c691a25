"""The live accounts page in headless Chromium, against "the exchange" (a second Papertrade on
loopback behind the fault proxy, tests/live/conftest.py): a key registered with its bound
source and limits, the mirrored order listed with its attempts, drift found by "Check now",
and the kill switch fired with "close positions too" after a confirmation, reported per
account."""

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from playwright.async_api import Browser, Page, expect

from tests.conftest import PG_URL, _drop_postgres_database, _fresh_postgres_database, unique_email
from tests.live.conftest import Exchange
from tests.live.conftest import exchange as exchange
from tests.live.test_live import exchange_position
from tests.trading_api.helpers import limit, set_price
from tests.web.conftest import WebApp, call, new_context, serve_on_own_origin, sign_up_in_browser


@pytest.fixture
async def live_web(
    exchange: Exchange, tmp_path: Path, uses_database: None
) -> AsyncIterator[WebApp]:
    name = "papertrade_live_web"
    url = (
        await _fresh_postgres_database(name)
        if PG_URL
        else f"sqlite+aiosqlite:///{tmp_path / 'l.db'}"
    )
    try:
        # The exchange's default timeout (5 s): "the exchange" shares this test's event loop,
        # and a busy machine stretched one of its answers past a shorter limit (a CI failure).
        async with serve_on_own_origin(
            url, tmp_path / "var", live_exchange_url=exchange.url
        ) as served:
            yield served
    finally:
        if PG_URL:
            await _drop_postgres_database(name)


@pytest.fixture
async def live_page(browser: Browser, live_web: WebApp) -> AsyncIterator[Page]:
    context = await new_context(browser, live_web)
    opened = await context.new_page()
    errors: list[str] = []
    opened.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        yield opened
        assert not errors, f"JavaScript errors on the page: {errors}"
    finally:
        await context.close()


async def test_register_mirror_check_and_kill_from_the_live_page(
    live_page: Page, live_web: WebApp, exchange: Exchange
) -> None:
    page = live_page
    await sign_up_in_browser(page, unique_email("live"))
    source = await call(page, "POST", "/v1/portfolios", {"name": "Paper source"})
    await page.goto("/app/live")
    await expect(page.locator("#live-empty")).to_be_visible()

    await page.fill("#live-label", "My sub")
    await page.fill("#live-key", exchange.api_key)
    await page.fill("#live-secret", "wrong secret")
    await page.select_option("#live-source", f"portfolio:{source['id']}")
    await page.fill("#live-max-loss", "300")
    await page.click("#live-form button[type=submit]")
    await expect(page.locator("#live-form .form-error")).to_contain_text("refused the key")
    await page.fill("#live-secret", exchange.api_secret)
    await page.click("#live-form button[type=submit]")
    card = page.locator(".live-account").first
    await expect(card.locator("h3")).to_have_text("My sub")
    await expect(card.locator("[data-role=status]")).to_have_text("active")
    await expect(card).to_contain_text("Source: Portfolio Paper source")
    await expect(card).to_contain_text("max daily loss 300")
    assert exchange.api_secret not in await page.content()

    await set_price(live_web.app, "BTCUSDT", "50000")
    await set_price(exchange.app, "BTCUSDT", "50000")
    await call(
        page,
        "POST",
        "/v1/order",
        {
            "portfolio_id": source["id"],
            "symbol": "BTCUSDT",
            "side": "buy",
            "type": "market",
            "quantity": "0.1",
        },
    )
    row = card.locator(".live-orders tbody tr").first
    await expect(row).to_contain_text("sent", timeout=30_000)
    await expect(row).to_contain_text("BTCUSDT")

    await limit(exchange.user, exchange.portfolio_id, "buy", "0.01", "40000")  # by hand there
    await card.get_by_role("button", name="Check now").click()
    await expect(card.locator("[data-role=drift]")).to_contain_text("1 open order(s)")

    await page.check("#kill-close")
    await page.click("#kill-button")
    dialog = page.locator("dialog[open]")
    await expect(dialog).to_contain_text("close every position")
    await dialog.get_by_role("button", name="Kill switch").click()
    report = page.locator("#kill-report tbody tr").first
    await expect(report).to_contain_text("My sub")
    await expect(report.locator("td").nth(1)).to_have_text("BTCUSDT")
    await expect(report.locator("td").nth(2)).to_have_text("BTCUSDT")
    await expect(card.locator("[data-role=status]")).to_have_text("killed")
    await expect(card.get_by_role("button", name="Resume")).to_be_visible()
    assert await exchange_position(exchange) == 0
