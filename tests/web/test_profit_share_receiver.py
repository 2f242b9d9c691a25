"""The portfolio that receives copiers' profit shares, chosen on *My subscribers* in headless
Chromium, at desktop and phone width (issue 30, point 1: profit shares are paper, booked into a
portfolio of the leader's choosing; the API could set the choice, the page could not show it or
change it). The owner sees the current receiver, picks another, reloads and sees it kept; a
portfolio deleted meanwhile is refused in words; then a settlement pays the chosen portfolio."""

from decimal import Decimal
from typing import Any

import pytest
from playwright.async_api import Browser, Page, ViewportSize, expect

from papertrade.copytrading import service as copies
from papertrade.models import CopyRelation
from tests.conftest import unique_email
from tests.web.conftest import (
    DESKTOP,
    PHONE,
    WebApp,
    call,
    expect_toast,
    new_context,
    sign_up_in_browser,
)


def label(portfolio: dict[str, Any]) -> str:
    return f"{portfolio['name']} ({portfolio['code']})"


async def settle_weekly(web: WebApp, relation_id: int, net_pnl: str) -> Any:
    """A weekly settlement of the relation at `net_pnl` (as tests/copytrading/
    test_revenue_share.py drives one: the copies' PnL set, then settled)."""
    async with web.app.state.ctx.transaction() as uow:
        row = await uow.session.get(CopyRelation, relation_id, with_for_update=True)
        assert row is not None
        row.cum_net_pnl = Decimal(net_pnl)
        return await copies.settle(uow, row, "weekly")


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
async def test_the_owner_chooses_the_portfolio_that_receives_profit_shares(
    browser: Browser, web: WebApp, viewport: ViewportSize
) -> None:
    context = await new_context(browser, web, viewport)
    page: Page = await context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        await sign_up_in_browser(page, unique_email("payout"))
        signals = await call(
            page,
            "POST",
            "/v1/portfolios",
            {"name": "signals", "visibility": "public", "initial_balance": "500"},
        )
        purse = await call(
            page, "POST", "/v1/portfolios", {"name": "purse", "initial_balance": "100"}
        )
        spare = await call(page, "POST", "/v1/portfolios", {"name": "spare"})
        await page.goto(f"/app/social/subscribers?portfolio={signals['id']}")

        # Until chosen, the shares go to the copied portfolio itself; the page says so.
        select = page.locator("#payout-select")
        current = page.locator("#payout-current")
        await expect(current).to_have_text(f"Now: {label(signals)}.")
        await expect(select).to_have_value(str(signals["id"]))
        await expect(select.locator("option")).to_have_count(3)
        await expect(select.locator(f"option[value='{signals['id']}']")).to_have_text(
            f"{label(signals)}, this portfolio"
        )
        await expect(page.locator("#payout-help")).to_contain_text("never into your wallet")
        box = await select.bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= viewport["width"]
        assert not await page.evaluate("document.documentElement.scrollWidth > innerWidth")

        # Another of my portfolios, saved through the API, said on the page.
        await select.select_option(str(purse["id"]))
        save = page.locator("#payout-form button[type=submit]")
        await save.click()
        await expect(current).to_have_text(f"Now: {label(purse)}.")
        await expect_toast(
            page, kind="success", text=f"Profit shares of {label(signals)} now go to {label(purse)}"
        )
        await expect(page.locator("#payout-form .form-error")).to_have_text("")
        terms = await call(page, "GET", f"/v1/copy/leaders/{signals['id']}/terms")
        assert terms["payout_portfolio_id"] == purse["id"]

        # Kept across a reload.
        await page.reload()
        await expect(current).to_have_text(f"Now: {label(purse)}.")
        await expect(select).to_have_value(str(purse["id"]))

        # A portfolio deleted meanwhile (another tab) is refused in words; nothing changes.
        await select.select_option(str(spare["id"]))
        await call(page, "DELETE", f"/v1/portfolios/{spare['id']}")
        await save.click()
        await expect(page.locator("#payout-form .form-error")).to_have_text(
            f"{label(spare)} no longer exists (deleted, perhaps in another tab), so it cannot "
            "receive profit shares. Nothing was saved: choose another portfolio."
        )
        await expect(current).to_have_text(f"Now: {label(purse)}.")
        await expect(select).to_have_value(str(purse["id"]))
        await expect(select.locator("option")).to_have_count(2)  # the deleted one is gone
        terms = await call(page, "GET", f"/v1/copy/leaders/{signals['id']}/terms")
        assert terms["payout_portfolio_id"] == purse["id"]

        # A copier's profit share settles into the chosen portfolio: paper, never a wallet.
        follower_context = await new_context(browser, web)
        try:
            follower = await follower_context.new_page()
            await sign_up_in_browser(follower, unique_email("payout-copier"))
            mine = await call(
                follower, "POST", "/v1/portfolios", {"name": "copies", "initial_balance": "500"}
            )
            relation = await call(
                follower,
                "POST",
                "/v1/copy/relations",
                {
                    "leader_portfolio_id": signals["id"],
                    "portfolio_id": mine["id"],
                    "mode": "fixed_ratio",
                    "allocation": 50,
                },
            )
            settled = await settle_weekly(web, relation["id"], "12.5")
            # 10 % (the default share) of 12.5 above a mark of 0.
            assert (settled.fee, settled.payout_portfolio_id) == (Decimal("1.25"), purse["id"])
            paid = await call(follower, "GET", f"/v1/portfolios/{mine['id']}")
            assert Decimal(str(paid["balance"])) == Decimal("498.75")
        finally:
            await follower_context.close()
        received = await call(page, "GET", f"/v1/portfolios/{purse['id']}")
        assert Decimal(str(received["balance"])) == Decimal("101.25")
        copied = await call(page, "GET", f"/v1/portfolios/{signals['id']}")
        assert Decimal(str(copied["balance"])) == 500
        (row,) = (await call(page, "GET", f"/v1/portfolios/{purse['id']}/ledger"))[:1]
        assert (row["kind"], row["amount"]) == ("profit_share", 1.25)
        (event,) = await call(page, "GET", "/v1/copy/settlements")
        assert (event["fee"], event["payout_portfolio_id"]) == (1.25, purse["id"])
        assert (await call(page, "GET", "/v1/user/wallet"))["balance"] == 0
        assert not errors, f"JavaScript errors on the page: {errors}"
    finally:
        await context.close()
