"""Issue 33 point 9: strategies in context. The editor shows the reference of its language (the
DSL's settings, indicators and actions; Python's ctx, orders and limits), built from the
parser's and the sandbox's own definitions, with the whole reference a link away; a deployed
strategy's signals are in its portfolio's Signals tab, each marked with the strategy, and the
portfolio page names the strategy trading in it while it is deployed. Desktop and phone."""

import pytest
from playwright.async_api import Browser, Page, ViewportSize, expect

from papertrade.strategies import reference
from papertrade.strategies.dsl.functions import FUNCTIONS
from tests.conftest import unique_email
from tests.web.conftest import (
    ARTIFACTS,
    DESKTOP,
    PHONE,
    Steps,
    WebApp,
    call,
    new_context,
    sign_up_in_browser,
)
from tests.web.test_strategies import ALWAYS_LONG, PYTHON, _evaluate_bars

SIZES = pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])


async def _no_sideways_scroll(page: Page) -> None:
    assert not await page.evaluate("document.documentElement.scrollWidth > innerWidth")


@SIZES
async def test_the_editor_shows_the_reference_of_its_language(
    browser: Browser, web: WebApp, viewport: ViewportSize
) -> None:
    context = await new_context(browser, web, viewport)
    page = await context.new_page()
    steps = Steps(page, f"strategy-reference-{viewport['width']}")
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    try:
        async with steps("a DSL strategy's editor lists every indicator, setting and action"):
            await sign_up_in_browser(page, unique_email("reference"))
            body = {"kind": "dsl", "name": "Ref DSL", "source": ALWAYS_LONG}
            dsl = await call(page, "POST", "/v1/strategies", body)
            await page.goto(f"/app/strategies/{dsl['id']}")
            panel = page.get_by_role("region", name="DSL reference")
            await expect(panel).to_be_visible()
            for name in FUNCTIONS:  # the parser's registry, not a copy of it
                await expect(panel.locator(f"tr[data-name='{name}']")).to_be_visible()
            await expect(panel).to_contain_text("macd_hist([series,] fast=12, slow=26, signal=9)")
            await expect(panel).to_contain_text("trailing_stop 1.5%")
            await panel.get_by_role("heading", name="Pine names").click()
            await expect(panel).to_contain_text("ta.crossover(a, b)")
            await expect(panel).to_contain_text("buy 250 usdt")
            await expect(panel).to_contain_text("close short")
            await expect(panel).not_to_contain_text("ctx.buy")
            await _no_sideways_scroll(page)
            await page.screenshot(
                path=str(ARTIFACTS / f"strategy-reference-dsl-{viewport['width']}.png"),
                full_page=True,
            )

        async with steps("a Python strategy's editor lists ctx, its orders and limits"):
            body = {"kind": "python", "name": "Ref Py", "source": PYTHON}
            py = await call(page, "POST", "/v1/strategies", body)
            await page.goto(f"/app/strategies/{py['id']}")
            panel = page.get_by_role("region", name="Python reference")
            await expect(panel).to_be_visible()
            await expect(panel).to_contain_text("ctx.buy(size=0.1, sl=None, tp=None, limit=None)")
            await expect(panel).to_contain_text("ctx.indicator(name, *args, source='close')")
            await expect(panel).to_contain_text("ctx.position")
            await expect(panel).to_contain_text("pnl_pct")
            await expect(panel).to_contain_text('ctx.indicator("atr", 14)')
            await panel.get_by_role("heading", name="Imports and limits").click()
            await expect(panel).to_contain_text("orders a bar")
            await expect(panel).not_to_contain_text("macd_hist")
            await _no_sideways_scroll(page)

        async with steps("the whole reference, both languages, one link away"):
            await panel.get_by_role("link", name="strategy reference").click()
            await page.wait_for_url("**/help/strategies")
            await expect(page.get_by_role("heading", name="Strategy reference")).to_be_visible()
            await expect(page.get_by_role("region", name="The strategy DSL")).to_contain_text(
                "bb_lower([series,] period=20, k=2)"
            )
            await expect(page.get_by_role("region", name="Python strategies")).to_contain_text(
                "ctx.sell(size=0.1, sl=None, tp=None, limit=None)"
            )
            await _no_sideways_scroll(page)
            await page.screenshot(
                path=str(ARTIFACTS / f"strategy-reference-help-{viewport['width']}.png"),
                full_page=True,
            )
        assert errors == []
    finally:
        await context.close()


@SIZES
async def test_a_deployed_strategy_is_named_on_its_portfolio_with_its_signals(
    browser: Browser, web: WebApp, viewport: ViewportSize
) -> None:
    context = await new_context(browser, web, viewport)
    page = await context.new_page()
    steps = Steps(page, f"strategy-in-portfolio-{viewport['width']}")
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    try:
        async with steps("a strategy deployed into a portfolio that has run two bars"):
            await sign_up_in_browser(page, unique_email("inportfolio"))
            portfolio = await call(page, "POST", "/v1/portfolios", {"name": "Bot account"})
            body = {"kind": "dsl", "name": "Always long bot", "source": ALWAYS_LONG}
            strategy = await call(page, "POST", "/v1/strategies", body)
            sid = strategy["id"]
            deployed = await call(
                page,
                "POST",
                f"/v1/strategies/{sid}/deployments",
                {"portfolio_id": portfolio["id"]},
            )
            await _evaluate_bars(web, deployed["id"], 2)

        async with steps("the portfolio's head names the strategy and links to it"):
            await page.goto(f"/app/portfolios/{portfolio['id']}")
            note = page.locator("#pf-strategies")
            await expect(note).to_be_visible()
            await expect(note).to_contain_text("Strategy trading here:")
            await expect(note).to_contain_text("Always long bot")
            await expect(note).to_contain_text(f"{strategy['code']} v1, BTCUSDT 1m")
            await expect(note).to_contain_text("running")
            link = note.get_by_role("link", name="Always long bot")
            assert await link.get_attribute("href") == f"/app/strategies/{sid}#live"

        async with steps("its signals are in the Signals tab, marked with the strategy"):
            if viewport is PHONE:
                await page.locator(".phone-tabs [data-phone-view=positions]").click()
            await page.get_by_role("tab", name="Signals").click()
            # two bars or more: the service's own scheduled pass may evaluate a bar as well
            rows = page.locator("#signals-table tbody tr")
            await expect(rows.nth(1)).to_be_visible()
            newest, oldest = rows.first, rows.last
            await expect(newest).to_contain_text("Strategy")
            await expect(newest).to_contain_text("Always long bot")
            await expect(newest).to_contain_text("line 3: when close > 0 then buy 0.01 qty")
            await expect(newest).to_contain_text("skipped")
            await expect(newest).to_contain_text("already long")
            await expect(oldest).to_contain_text("executed")
            await expect(oldest).to_contain_text("buy 0.01 BTCUSDT")
            await expect(oldest).to_contain_text("order #")
            by = newest.get_by_role("link", name="Always long bot")
            assert await by.get_attribute("href") == f"/app/strategies/{sid}"
            await _no_sideways_scroll(page)
            await page.screenshot(
                path=str(ARTIFACTS / f"strategy-in-portfolio-{viewport['width']}.png"),
                full_page=True,
            )

        async with steps("a new bar's signal arrives without a reload"):
            shown = await rows.count()
            await _evaluate_bars(web, deployed["id"], 1)
            await page.wait_for_function(
                "n => document.querySelectorAll('#signals-table tbody tr').length > n",
                arg=shown,
                timeout=20_000,
            )
            shown = await rows.count()

        async with steps("stopped, the strategy no longer trades here; its signals stay"):
            await call(page, "POST", f"/v1/strategies/{sid}/deployments/{deployed['id']}/stop")
            await page.reload()
            if viewport is PHONE:
                await page.locator(".phone-tabs [data-phone-view=positions]").click()
            await page.get_by_role("tab", name="Signals").click()
            await expect(rows.nth(shown - 1)).to_be_visible()
            await expect(rows.first).to_contain_text("Always long bot")
            await expect(page.locator("#pf-strategies")).to_be_hidden()
        assert errors == []
    finally:
        await context.close()


def test_the_reference_is_the_registrys() -> None:
    """What the browser test reads is what the registry holds (no copy to drift)."""
    names = [f.name for f in reference.reference().dsl_functions]
    assert names == list(FUNCTIONS)
