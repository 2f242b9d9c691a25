"""The portfolio page stays live without spending its session's request budget (issue 14).

One idle tab used to re-read everything on each `position.mark` (once a second): ~780 requests a
minute against the 600/min session budget, until the user's own orders were refused.
"""

import asyncio
import json
from typing import Any

import httpx
from playwright.async_api import Browser, Page, Request, Response, WebSocketRoute, expect

from papertrade.config import Settings
from tests.conftest import unique_email
from tests.foundation.helpers import hold_the_window
from tests.trading_api.helpers import set_price
from tests.web.conftest import (
    Steps,
    WebApp,
    call,
    expect_toast,
    new_context,
    serve_on_own_origin,
    sign_up_in_browser,
)

IDLE_S = 120
# What the pages should do in two idle minutes with the socket up. The portfolio page: its 15 s
# safety net (4 reads), the 60 s one (5 reads) and the ticket's 15 s quote, about 50 requests.
# The dashboard: its 30 s safety net (3 reads for one portfolio), about 15. Twice that still
# leaves the 1,200 requests two minutes of the session's budget allow almost untouched.
IDLE_REQUEST_BOUND = 100
DASHBOARD_REQUEST_BOUND = 30


class Traffic:
    """The page's HTTP requests (WebSocket frames are not requests) and the 429s it got."""

    def __init__(self, page: Page):
        self.requests: list[str] = []
        self.refused: list[str] = []
        page.on("request", self._request)
        page.on("response", self._response)

    def _request(self, request: Request) -> None:
        self.requests.append(f"{request.method} {request.url}")

    def _response(self, response: Response) -> None:
        if response.status == 429:
            self.refused.append(response.url)

    def reads_of_v1(self, since: int = 0) -> list[str]:
        return [r for r in self.requests[since:] if r.startswith("GET ") and "/v1/" in r]


async def open_position_page(page: Page, symbol: str, quantity: str) -> Any:
    """A new user's portfolio holding `quantity` of `symbol`, its page open and streaming."""
    await sign_up_in_browser(page, unique_email("live"))
    portfolio = await call(page, "POST", "/v1/portfolios", {"name": "Idle tab"})
    order = {"portfolio_id": portfolio["id"], "symbol": symbol, "type": "market"}
    await call(page, "POST", "/v1/order", {**order, "side": "buy", "quantity": quantity})
    await page.goto(f"/app/portfolios/{portfolio['id']}")
    await expect(page.locator("#live-state")).to_have_class("live-dot on")
    await expect(page.locator(f'#positions-table tr[data-symbol="{symbol}"]')).to_be_visible()
    return portfolio


async def test_an_idle_portfolio_page_stays_far_below_its_request_budget(
    page: Page, web: WebApp, steps: Steps
) -> None:
    await set_price(web.app, "LTCUSDT", "100")
    traffic = Traffic(page)
    row = page.locator('#positions-table tr[data-symbol="LTCUSDT"]')
    # The pages' timers run on a clock the test moves: two idle minutes take a few seconds.
    await page.clock.install()

    async with steps("a portfolio page with an open position, and the dashboard in a 2nd tab"):
        portfolio = await open_position_page(page, "LTCUSDT", "1")
        await expect(row.locator(".upnl")).to_have_text("0.00")
        dashboard = await page.context.new_page()
        dashboard_errors: list[str] = []
        dashboard.on("pageerror", lambda exc: dashboard_errors.append(str(exc)))
        dashboard_traffic = Traffic(dashboard)
        await dashboard.goto("/app")
        card = dashboard.locator(f'#pf-list [data-portfolio-id="{portfolio["id"]}"]')
        await expect(card.locator(".pos-chips")).to_contain_text("LTCUSDT")

    async with steps("two idle minutes while the price moves"):
        before, dashboard_before = len(traffic.requests), len(dashboard_traffic.requests)
        for n in range(1, 7):
            await page.clock.run_for(IDLE_S * 1000 // 6)  # both tabs: the clock is the context's
            await set_price(web.app, "LTCUSDT", str(100 + n))
        idle = traffic.requests[before:]
        assert 8 <= len(idle) < IDLE_REQUEST_BOUND, (len(idle), idle[-20:])  # the nets did run
        dashboard_idle = dashboard_traffic.requests[dashboard_before:]
        assert 4 <= len(dashboard_idle) < DASHBOARD_REQUEST_BOUND, dashboard_idle
        assert traffic.refused == dashboard_traffic.refused == []
        # The marks arrived all along, over the socket, without re-reading the account.
        await expect(row.locator(".mark")).to_have_text("106.00")
        await expect(row.locator(".upnl")).to_have_text("+6.00")
        await expect(page.locator("#stat-upnl")).to_have_text("+6.00")
        await expect(page.locator("#live-state")).to_have_class("live-dot on")
        await expect(page.locator("#stale-note")).to_be_hidden()
        await expect(card.locator(".pos-chips")).to_contain_text("+6.00")
        await expect(dashboard.locator("#stale-note")).to_be_hidden()
        assert not dashboard_errors, dashboard_errors

    async with steps("an order from the ticket still goes through"):
        await page.select_option("#t-symbol", "LTCUSDT")
        await page.select_option("#t-unit", "base")
        await page.fill("#t-size", "1")
        await page.click("#t-submit")
        await expect_toast(page, "Filled")
        await expect(row.locator("td").nth(2)).to_have_text("2.000")
        assert traffic.refused == []


async def spend_session_budget(page: Page) -> int:
    """Read from the page until the session's budget refuses; the refusal's Retry-After."""
    script = """async () => {
        for (;;) {
            const response = await fetch('/v1/portfolios/my');
            if (response.status === 429) return Number(response.headers.get('Retry-After'));
        }
    }"""
    retry_after = int(await page.evaluate(script))
    # The budget is a fixed one-minute window: start over in a fresh one when this one is about
    # to end, so that the page is still refused while the test looks at it.
    while retry_after < 25:
        await asyncio.sleep(retry_after + 0.5)
        retry_after = int(await page.evaluate(script))
    return retry_after


async def test_a_page_over_its_budget_says_so_waits_and_still_shows_pushed_data(
    browser: Browser, isolated_settings: Settings
) -> None:
    budget = 80
    async with serve_on_own_origin(
        isolated_settings.database_url,
        isolated_settings.var_dir,
        rate_limit_session_per_min=budget,
    ) as tight:
        await set_price(tight.app, "LTCUSDT", "100")
        context = await new_context(browser, tight)
        page = await context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        steps = Steps(page, "test_a_page_over_its_budget")
        traffic = Traffic(page)
        row = page.locator('#positions-table tr[data-symbol="LTCUSDT"]')
        try:
            async with steps("a portfolio page with a position and a webhook"):
                portfolio = await open_position_page(page, "LTCUSDT", "1")
                pid = portfolio["id"]
                webhook = await call(page, "POST", f"/v1/portfolios/{pid}/webhook-tokens")
                await expect(page.locator("#stale-note")).to_be_hidden()

            async with steps("the session's budget is spent: the page says its data is stale"):
                await spend_session_budget(page)
                hold_the_window()  # refused for the rest of the test, however long it takes
                async with httpx.AsyncClient() as tv:  # an alert: its events make the page read
                    sent = await tv.post(webhook["url"], content="buy LTCUSDT 1")
                assert sent.status_code == 200, sent.text
                note = page.locator("#stale-note")
                await expect(note).to_be_visible()
                await expect(note).to_contain_text("Too many requests")
                await expect(note).to_contain_text("Retrying in")
                await expect(page.locator("#live-state")).to_have_class("live-dot stale")

            async with steps("it stops reading, and pushed signals and marks still show"):
                refused_at = len(traffic.requests)
                await page.click("#tab-signals")
                signals = page.locator("#signals-table tbody tr")
                await expect(signals.first).to_contain_text("buy LTCUSDT 1")
                async with httpx.AsyncClient() as tv:
                    sent = await tv.post(webhook["url"], content="buy LTCUSDT 0.5")
                assert sent.status_code == 200, sent.text
                await expect(signals).to_have_count(2)
                await expect(signals.first).to_contain_text("buy LTCUSDT 0.5")
                await expect(signals.first.locator(".outcome")).to_have_text("executed")
                await set_price(tight.app, "LTCUSDT", "103")
                await page.click("#tab-positions")
                await expect(row.locator(".mark")).to_have_text("103.00")
                # Events kept coming; the page waited for the Retry-After instead of asking again.
                assert traffic.reads_of_v1(refused_at) == []
                await expect(note).to_be_visible()

            async with steps("an order is still sent, and the refusal is explained"):
                await page.select_option("#t-unit", "base")
                await page.fill("#t-size", "1")
                await page.click("#t-submit")
                await expect(page.locator("#ticket-error")).to_contain_text(
                    f"Rate limit of {budget} requests per minute exceeded"
                )
            assert not errors, f"JavaScript errors on the page: {errors}"
        finally:
            await context.close()


async def test_a_fill_whose_push_is_lost_reaches_the_history_with_the_safety_read(
    page: Page, web: WebApp, steps: Steps
) -> None:
    """The socket stays up but drops the portfolio's events (as a relay under load can): the
    15-second safety read sees the position gone, and the order history, fills and ledger follow
    it then, not at their own 60-second read."""
    await set_price(web.app, "DOTUSDT", "10")
    # The account's channels (their `position.mark`, prices only, is lost as well).
    account = ("orders:", "positions:", "balance:", "signals:", "portfolio:")
    row = page.locator('#positions-table tr[data-symbol="DOTUSDT"]')

    def drop_portfolio_events(route: WebSocketRoute) -> None:
        server = route.connect_to_server()

        def relay(message: str | bytes) -> None:
            data = json.loads(message)
            if data.get("type") == "resync" or str(data.get("channel", "")).startswith(account):
                return  # lost on the way
            route.send(message)

        server.on_message(relay)

    async with steps("a long of DOT with a limit sell above it; the socket drops its events"):
        await page.route_web_socket("**/v1/ws", drop_portfolio_events)
        portfolio = await open_position_page(page, "DOTUSDT", "20")
        sell = {"portfolio_id": portfolio["id"], "symbol": "DOTUSDT", "side": "sell"}
        await call(
            page, "POST", "/v1/order", {**sell, "type": "limit", "quantity": "20", "price": "11"}
        )
        await page.click("#tab-history")
        await expect(page.locator("#history-table tbody tr")).to_have_count(1)  # the buy

    async with steps("the mark reaches 11: the safety read shows the position gone and the sale"):
        await set_price(web.app, "DOTUSDT", "11")
        await expect(row).to_have_count(0, timeout=25_000)
        sold = page.locator("#history-table tbody tr", has_text="Sell")
        await expect(sold).to_contain_text("filled")
        await expect(sold).to_contain_text("11.")
