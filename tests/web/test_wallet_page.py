"""The wallet page in headless Chromium: recharge (exact amount, address, countdown, paid
without a reload), the list of recharge orders that a reload finds again (issue 33, point 2),
paying for a membership, history."""

import asyncio
import re
from collections.abc import AsyncIterator
from decimal import Decimal
from pathlib import Path

import pytest
from playwright.async_api import Browser, Page, ViewportSize, expect
from sqlalchemy import update

from papertrade.kit.time import now_ms
from papertrade.models import RechargeOrder
from papertrade.recharge.watcher import watch_once
from tests.conftest import PG_URL, _drop_postgres_database, _fresh_postgres_database, unique_email
from tests.fakes.trongrid import ADDRESS, FakeTronGrid
from tests.liveserver import live_server
from tests.web.conftest import (
    DESKTOP,
    PHONE,
    WebApp,
    new_context,
    serve_on_own_origin,
    sign_up_in_browser,
)


@pytest.fixture(scope="module")
async def tron() -> AsyncIterator[tuple[FakeTronGrid, str]]:
    fake = FakeTronGrid()
    async with live_server(fake.app()) as url:
        yield fake, url


@pytest.fixture(scope="module")
async def wallet_web(
    uses_database: None, tron: tuple[FakeTronGrid, str], tmp_path_factory: pytest.TempPathFactory
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
    # Issue 30: money moves one way, wallet -> portfolio, and the page says so everywhere.
    await expect(page.locator("#wallet-intro")).to_contain_text("one way")
    await expect(page.locator("#wallet-intro")).not_to_contain_text("to and from")
    await expect(page.locator("#transfer-one-way")).to_contain_text("One way only")

    await page.fill("#recharge-amount", "0.5")
    await page.click("#recharge-form button[type=submit]")
    await expect(page.locator("#recharge-form .form-error")).not_to_be_empty()
    await page.fill("#recharge-amount", "20")
    await page.click("#recharge-form button[type=submit]")
    await expect(page.locator("#pay-address")).to_have_value(ADDRESS)
    pay = await page.input_value("#pay-amount")
    assert pay.startswith("20")
    await expect(page.locator("#recharge-countdown")).to_contain_text("00:")
    await qr_loaded(page)

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


async def qr_loaded(page: Page) -> None:
    """Until the QR code has loaded (polled: the page's CSP forbids the string evaluation that
    wait_for_function uses once its first check fails)."""
    deadline = asyncio.get_running_loop().time() + 10
    qr = page.locator("#recharge-qr")
    while not await qr.evaluate("(img) => img.complete && img.naturalWidth > 100"):
        assert asyncio.get_running_loop().time() < deadline, "the QR code did not load"
        await asyncio.sleep(0.05)


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
async def test_recharge_orders_survive_a_reload_and_are_listed_with_their_state(
    browser: Browser,
    wallet_web: WebApp,
    tron: tuple[FakeTronGrid, str],
    viewport: ViewportSize,
) -> None:
    context = await new_context(browser, wallet_web, viewport)
    page = await context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        await sign_up_in_browser(page, unique_email("recharges"))
        await page.goto("/app/wallet")
        await expect(page.locator("#recharge-orders-empty")).to_be_visible()

        await page.fill("#recharge-amount", "30")
        await page.click("#recharge-form button[type=submit]")
        await expect(page.locator("#pay-address")).to_have_value(ADDRESS)
        first_pay = await page.input_value("#pay-amount")
        assert first_pay.startswith("30")

        # A reload brings the pending order back: address, exact amount, QR code, countdown.
        await page.reload()
        await expect(page.locator("#pay-address")).to_have_value(ADDRESS)
        await expect(page.locator("#pay-amount")).to_have_value(first_pay)
        await expect(page.locator("#recharge-status")).to_have_text("pending")
        await expect(page.locator("#recharge-countdown")).to_contain_text(":")
        await expect(page.locator("#recharge-countdown")).not_to_have_text("00:00:00")
        await qr_loaded(page)
        rows = page.locator("#recharge-orders tbody tr")
        await expect(rows).to_have_count(1)
        first_shown = f"{Decimal(first_pay):,.2f} USDT"  # as the page writes amounts
        await expect(rows.first).to_contain_text(first_shown)
        await expect(rows.first).to_contain_text("pending")
        await expect(rows.first).to_contain_text("left")

        # Two more: pending ones first, each can be shown again; one is cancelled.
        for amount in ("31", "32"):
            await page.fill("#recharge-amount", amount)
            await page.click("#recharge-form button[type=submit]")
            await expect(page.locator("#pay-amount")).to_have_value(re.compile(rf"^{amount}\b"))
            await expect(rows).to_have_count(int(amount) - 29)
        order_31 = rows.filter(has_text="31.0")
        await order_31.get_by_role("button", name="Cancel").click()
        await (
            page.get_by_role("dialog", name="Confirm")
            .get_by_role("button", name="Cancel order")
            .click()
        )
        await expect(order_31).to_contain_text("cancelled")
        await expect(rows.last).to_contain_text("cancelled")  # past orders after pending ones

        order_30 = rows.filter(has_text=first_shown)
        await order_30.get_by_role("button", name="Show").click()
        await expect(page.locator("#pay-amount")).to_have_value(first_pay)
        await qr_loaded(page)

        # The 30 is paid (without a reload), the 32 expires: each row says so, with its date.
        tron[0].add(first_pay)
        await watch_once(wallet_web.app.state.ctx)
        await expect(page.locator("#recharge-status")).to_have_text("paid")
        await expect(order_30).to_contain_text("paid")
        async with wallet_web.app.state.ctx.transaction() as uow:
            await uow.session.execute(
                update(RechargeOrder)
                .where(RechargeOrder.amount == 32, RechargeOrder.status == "pending")
                .values(expires_at=now_ms() - 60_000)
            )
        await page.reload()
        await expect(page.locator("#recharge-order")).to_be_hidden()  # nothing waits any more
        await expect(rows).to_have_count(3)
        states = [str(await row.get_attribute("data-status")) for row in await rows.all()]
        assert sorted(states) == ["cancelled", "expired", "paid"]
        await expect(order_30).to_contain_text("paid ")
        await expect(rows.filter(has_text="32.0")).to_contain_text("expired ")
        await expect(page.locator("#wallet-balance")).to_contain_text("30")
        width = await page.evaluate("document.documentElement.scrollWidth")
        assert width <= viewport["width"], f"the page scrolls sideways: {width} px"
        assert not errors, f"JavaScript errors on the page: {errors}"
    finally:
        await context.close()
