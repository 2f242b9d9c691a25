"""The wallet page in headless Chromium: recharge (exact amount, address, countdown, paid
without a reload), paying for a membership, history."""

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from playwright.async_api import Browser, Page, expect

from papertrade.recharge.watcher import watch_once
from tests.conftest import PG_URL, _drop_postgres_database, _fresh_postgres_database, unique_email
from tests.fakes.trongrid import ADDRESS, FakeTronGrid
from tests.liveserver import live_server
from tests.web.conftest import WebApp, new_context, serve_on_own_origin, sign_up_in_browser


@pytest.fixture(scope="module")
async def tron() -> AsyncIterator[tuple[FakeTronGrid, str]]:
    fake = FakeTronGrid()
    async with live_server(fake.app()) as url:
        yield fake, url


@pytest.fixture(scope="module")
async def wallet_web(
    tron: tuple[FakeTronGrid, str], tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[WebApp]:
    var: Path = tmp_path_factory.mktemp("walletweb")
    name = "papertrade_wallet_web"
    url = await _fresh_postgres_database(name) if PG_URL else f"sqlite+aiosqlite:///{var / 'w.db'}"
    async with serve_on_own_origin(
        url,
        var,
        tiers_enforced=True,
        recharge_addresses=[ADDRESS],
        trongrid_url=tron[1],
        recharge_confirmations=0,
        recharge_poll_s=0,
    ) as served:
        yield served
    if PG_URL:
        await _drop_postgres_database(name)


@pytest.fixture
async def wallet_page(browser: Browser, wallet_web: WebApp) -> AsyncIterator[Page]:
    context = await new_context(browser, wallet_web)
    opened = await context.new_page()
    errors: list[str] = []
    opened.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        yield opened
        assert not errors, f"JavaScript errors on the page: {errors}"
    finally:
        await context.close()


async def test_recharge_pay_and_spend_from_the_wallet_page(
    wallet_page: Page, wallet_web: WebApp, tron: tuple[FakeTronGrid, str]
) -> None:
    page, fake = wallet_page, tron[0]
    await sign_up_in_browser(page, unique_email("wallet"))
    await page.click("text=Wallet")
    await page.wait_for_url("**/app/wallet")
    await expect(page.locator("#wallet-balance")).to_have_text("0.00")
    await expect(page.locator("#tier-name")).to_have_text("free")

    await page.fill("#recharge-amount", "0.5")
    await page.click("#recharge-form button[type=submit]")
    await expect(page.locator("#recharge-form .form-error")).not_to_be_empty()
    await page.fill("#recharge-amount", "20")
    await page.click("#recharge-form button[type=submit]")
    await expect(page.locator("#pay-address")).to_have_value(ADDRESS)
    pay = await page.input_value("#pay-amount")
    assert pay.startswith("20")
    await expect(page.locator("#recharge-countdown")).to_contain_text("00:")
    qr_loaded = "(img) => img.complete && img.naturalWidth > 100"
    await page.wait_for_function(f"({qr_loaded})(document.querySelector('#recharge-qr'))")

    fake.add(pay)
    await watch_once(wallet_web.app.state.ctx)
    await expect(page.locator("#recharge-status")).to_have_text("paid")  # no reload
    await expect(page.locator("#wallet-balance")).to_contain_text("20")
    await expect(page.locator("#wallet-ledger tbody tr").first).to_contain_text("recharge")

    # Tiers are chosen on the tiers page, which asks before paying (issue 33, point 3).
    await page.get_by_role("link", name="Compare the tiers and change yours").click()
    await page.get_by_role("button", name="Switch to Pro").click()
    await page.get_by_role("dialog", name="Confirm").get_by_role("button", name="Pay").click()
    await expect(page.locator("#tiers-mine")).to_contain_text("Your tier: Pro")
    await page.goto("/app/wallet")
    await expect(page.locator("#tier-name")).to_have_text("pro")
    await expect(page.locator("#wallet-ledger tbody tr").first).to_contain_text("tier_payment")
