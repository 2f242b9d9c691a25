"""The strategy pages in headless Chromium (issue 16 item 12): the editor shows a save error at
its line, a fix becomes version 2, a backtest's progress reaches 100 % and its charts and trades
show, a deployment starts and stops, and a public strategy reads signed out."""

import asyncio
import json
import re
from datetime import datetime, timedelta

from playwright.async_api import Browser, Page, Route, WebSocketRoute, expect
from sqlalchemy import update

from papertrade.models import StrategyDeployment
from papertrade.strategies import live
from tests.conftest import unique_email
from tests.web.conftest import PHONE, Steps, WebApp, call, new_context, sign_up_in_browser
from tests.web.test_content_security_policy import RECORD_VIOLATIONS

BROKEN = """symbol BTCUSDT
timeframe 1m
when sma(5) crosses above then buy 50%
"""
FIXED = """symbol BTCUSDT
timeframe 1m
when sma(5) crosses above sma(20) then buy 50%
when sma(5) crosses below sma(20) then sell 50%
"""
PYTHON = """class Strategy:
    symbol = "BTCUSDT"
    timeframe = "1h"

    def init(self, ctx):
        self.fast = ctx.indicator("sma", 10)

    def next(self, ctx):
        if ctx.bar.close > self.fast[-1]:
            ctx.buy(size=0.5)
"""


async def replace_source(page: Page, text: str) -> None:
    """Type into CodeMirror as a user would: focus, select all, type the new text."""
    content = page.locator("#editor .cm-content")
    await content.click()
    await page.keyboard.press("Control+A")
    await page.keyboard.press("Delete")
    await page.keyboard.insert_text(text)
    await expect(content).to_contain_text(text.splitlines()[-1])


async def test_edit_backtest_deploy_and_stop(page: Page, web: WebApp, steps: Steps) -> None:
    async with steps("a name is required, said plainly"):
        await sign_up_in_browser(page, unique_email("strat"))
        await page.get_by_role("link", name="Strategies").click()
        await page.wait_for_url("**/app/strategies")
        await expect(page.locator("#st-empty")).to_be_visible()
        await page.click("#create-strategy button[type=submit]")
        error = page.locator("#create-strategy .form-error")
        await expect(error).to_have_text("Name must not be empty.")

    async with steps("create a DSL strategy: the editor opens with highlighting"):
        await page.fill("#st-name", "Fast cross")
        await page.keyboard.press("Enter")
        await page.wait_for_url("**/app/strategies/*")
        await expect(page.locator("#versions-table tbody tr")).to_have_count(1)
        # CodeMirror's highlighter gave the DSL's keywords their own spans
        await expect(
            page.locator("#editor .cm-content span", has_text="when").first
        ).to_be_visible()

    async with steps("a source with an error: shown at its line and column"):
        await replace_source(page, BROKEN)
        await page.click("#save-version")
        await expect(page.locator("#source-error-text")).to_contain_text("Line 3, column")
        await expect(page.locator("#source-error-text")).to_contain_text("expected")
        await expect(page.locator("#editor .cm-lintRange-error")).to_have_count(1)
        await expect(page.locator("#editor .cm-lint-marker-error")).to_have_count(1)
        # the cursor was moved to the error: the active line is line 3
        active = page.locator("#editor .cm-lineNumbers .cm-activeLineGutter")
        await expect(active).to_have_text("3")
        await expect(page.locator("#versions-table tbody tr")).to_have_count(1)

    async with steps("fixed: saved as version 2, the error gone"):
        await replace_source(page, FIXED)
        await page.keyboard.press("Control+Enter")  # the keyboard shortcut saves
        await expect(page.locator("#save-state")).to_have_text("Saved as version 2.")
        await expect(page.locator("#source-error")).to_be_hidden()
        await expect(page.locator("#editor .cm-lintRange-error")).to_have_count(0)
        await expect(page.locator("#versions-table tbody tr")).to_have_count(2)
        # Tab indents inside the editor; Esc then Tab leaves it (no keyboard trap)
        await page.locator("#editor .cm-content").focus()
        await page.keyboard.press("Escape")
        await page.keyboard.press("Tab")
        focused = await page.evaluate("document.activeElement.id")
        assert focused == "save-version", focused
        await page.get_by_role("button", name="View version 1").click()
        await expect(page.locator("#version-source .cm-content")).to_contain_text(
            "sma(10) crosses above sma(30)"
        )

    async with steps("backtest: the progress bar reaches 100 and the result shows"):
        await page.click("#tab-backtest")
        await expect(page.locator("#bt-version")).to_have_value("2")
        end = await page.input_value("#bt-end")
        start = datetime.fromisoformat(end) - timedelta(days=2)
        await page.fill("#bt-start", start.strftime("%Y-%m-%dT%H:%M"))
        await page.fill("#bt-taker", "0.05")
        # The page follows the run over its WebSocket too (the `backtests` channel): record
        # what the browser receives there.
        frames: list[str] = []
        page.on(
            "websocket",
            lambda ws: ws.on("framereceived", lambda frame: frames.append(str(frame))),
        )
        await page.click("#bt-form button[type=submit]")
        await expect(page.locator("#bt-progress")).to_be_visible()
        await expect(page.locator("#bt-bar")).to_have_js_property("value", 100, timeout=120_000)
        pushed = [json.loads(f) for f in frames if "backtest.progress" in f]
        assert pushed, frames  # progress came over the socket, not only from polling
        assert pushed[-1]["data"]["status"] in ("running", "done"), pushed[-1]
        await expect(page.locator("#bt-result")).to_be_visible(timeout=30_000)
        await expect(page.locator("#bt-result-meta")).to_contain_text("taker fee 0.05%")
        metrics = page.locator("#bt-metrics tbody")
        await expect(metrics).to_contain_text("Total return")
        await expect(metrics).to_contain_text("Sharpe ratio")
        await expect(page.locator("#bt-equity canvas").first).to_be_visible()
        await expect(page.locator("#bt-drawdown canvas").first).to_be_visible()
        await expect(page.locator("#bt-price canvas").first).to_be_visible()
        await expect(page.locator("#bt-price-desc")).to_contain_text("fills marked")
        trades = page.locator("#bt-trades tbody tr")
        await expect(trades.first).to_be_visible()
        assert await trades.count() > 1
        await expect(trades.first).to_contain_text("line ")  # the rule that opened it
        await expect(page.locator("#bt-table tbody tr")).to_have_count(1)
        await expect(page.locator("#bt-table tbody tr").first).to_contain_text("Done")

    async with steps("deploy into a portfolio, pause, resume and stop"):
        await call(page, "POST", "/v1/portfolios", {"name": "Strategy home"})
        await page.click("#tab-live")
        await expect(page.locator("#dp-portfolio option")).to_have_count(1)
        await page.click("#deploy-form button[type=submit]")
        row = page.locator("#dep-table tbody tr").first
        await expect(row).to_contain_text("Running")
        await expect(row).to_contain_text("Strategy home")
        await expect(row).to_contain_text("v2")
        await row.get_by_role("button", name="Pause").click()
        await expect(row).to_contain_text("Paused")
        await row.get_by_role("button", name="Resume").click()
        await expect(row).to_contain_text("Running")
        await row.get_by_role("button", name="Stop").click()
        await page.locator("dialog[open]").get_by_role("button", name="Stop").click()
        await expect(row).to_contain_text("Stopped")
        await expect(row.get_by_role("button", name="Stop")).to_have_count(0)


async def test_public_strategy_page_signed_out_and_at_phone_width(
    page: Page, browser: Browser, web: WebApp, steps: Steps
) -> None:
    async with steps("a public strategy"):
        await sign_up_in_browser(page, unique_email("pubstrat"))
        created = await call(
            page,
            "POST",
            "/v1/strategies",
            {"kind": "dsl", "name": "Open cross", "source": FIXED, "visibility": "public"},
        )
        code = created["code"]

    async with steps("read signed out, at phone width, without sideways scrolling"):
        context = await new_context(browser, web, PHONE)
        anon = await context.new_page()
        try:
            await anon.goto(f"/s/{code}")
            await expect(anon.locator("#ps-title")).to_have_text("Open cross")
            await expect(anon.locator("#ps-source .cm-content")).to_contain_text("crosses below")
            await expect(anon.locator("[data-empty-for=ps-signals]")).to_be_visible()
            wide = await anon.evaluate("document.documentElement.scrollWidth > innerWidth")
            assert not wide
        finally:
            await context.close()

    async with steps("a private strategy is not shown to others"):
        await call(page, "PATCH", f"/v1/strategies/{created['id']}", {"visibility": "private"})
        context = await new_context(browser, web)
        anon = await context.new_page()
        try:
            missing = await anon.goto(f"/s/{code}")
            assert missing is not None and missing.status == 404
            await expect(anon.locator("#not-found")).to_contain_text("No public strategy")
            assert "crosses below" not in await anon.content()
        finally:
            await context.close()

    async with steps("the owner's strategy page at phone width fits the screen"):
        await page.set_viewport_size(PHONE)
        await page.goto(f"/app/strategies/{created['id']}")
        await expect(page.locator("#editor .cm-content")).to_contain_text("crosses below")
        wide = await page.evaluate("document.documentElement.scrollWidth > innerWidth")
        assert not wide


async def test_strategy_pages_load_without_csp_violations(browser: Browser, web: WebApp) -> None:
    """The bundled editor and the charts run under the pages' policy: nothing is blocked."""
    context = await new_context(browser, web)
    await context.add_init_script(RECORD_VIOLATIONS)
    page = await context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        await sign_up_in_browser(page, unique_email("stcsp"))
        created = await call(
            page,
            "POST",
            "/v1/strategies",
            {"kind": "python", "name": "Py", "source": PYTHON, "visibility": "public"},
        )
        await page.goto("/app/strategies")
        await expect(page.locator("#st-table tbody tr")).to_have_count(1)
        await page.goto(f"/app/strategies/{created['id']}")
        await expect(page.locator("#editor .cm-content")).to_contain_text("class Strategy")
        for tab in ("#tab-backtest", "#tab-live"):
            await page.click(tab)
        await page.wait_for_load_state("networkidle")
        await page.goto(f"/s/{created['code']}")
        await expect(page.locator("#ps-source .cm-content")).to_contain_text("def next")
        assert await page.evaluate("window.cspViolations") == []
        assert errors == []
    finally:
        await context.close()


ALWAYS_LONG = "symbol BTCUSDT\ntimeframe 1m\nwhen close > 0 then buy 0.01 qty\n"


async def _evaluate_bars(web: WebApp, deployment_id: int, times: int) -> None:
    """The live evaluator, run on the newest closed bar `times` times (forgetting it was done
    in between): a signal each time, as on that many bars."""
    ctx = web.app.state.ctx
    for _ in range(times):
        async with ctx.db.unit_of_work() as session:
            await session.execute(
                update(StrategyDeployment)
                .where(StrategyDeployment.id == deployment_id)
                .values(last_bar_ms=None)
            )
        await live.evaluate_due(ctx)


async def test_signal_history_pages_and_the_drift_report(
    page: Page, web: WebApp, steps: Steps
) -> None:
    async with steps("a deployed strategy with more signals than one page"):
        await sign_up_in_browser(page, unique_email("signals"))
        portfolio = await call(page, "POST", "/v1/portfolios", {"name": "Signals"})
        body = {"kind": "dsl", "name": "Always long", "source": ALWAYS_LONG}
        strategy = await call(page, "POST", "/v1/strategies", body)
        sid = strategy["id"]
        deployed = await call(
            page, "POST", f"/v1/strategies/{sid}/deployments", {"portfolio_id": portfolio["id"]}
        )
        await _evaluate_bars(web, deployed["id"], 55)
        total = len((await call(page, "GET", f"/v1/strategies/{sid}/signals?limit=500"))["signals"])
        assert total >= 55

    async with steps("the first page, then the older ones"):
        await page.goto(f"/app/strategies/{sid}#live")
        rows = page.locator("#sig-table tbody tr")
        await expect(rows).to_have_count(50)
        await expect(rows.first).to_contain_text("line 3: when close > 0 then buy 0.01 qty")
        await expect(page.locator("#sig-table")).to_contain_text("already long")
        await expect(rows.first).to_contain_text("buy 0.01 BTCUSDT")
        await page.click("#sig-more")
        # the oldest signal, on the second page, is the one that bought
        await expect(rows.last).to_contain_text("executed")
        now = len((await call(page, "GET", f"/v1/strategies/{sid}/signals?limit=500"))["signals"])
        assert await rows.count() >= total and await rows.count() <= now
        await expect(page.locator("#sig-more")).to_be_hidden()

    async with steps("the drift report of the deployment"):
        row = page.locator("#dep-table tbody tr").first
        await expect(row).to_contain_text("Running")
        await row.get_by_role("button", name="Drift report").click()
        await expect(page.locator("#drift")).to_be_visible()
        await expect(page.locator("#drift-summary")).to_contain_text("Live fills", timeout=120_000)
        await expect(page.locator("#drift-meta")).to_contain_text("Live from")
        await expect(page.locator("#drift-table tbody tr").first).to_be_visible()
        await expect(page.locator("#drift-notes li").first).to_be_visible()


async def test_a_late_poll_answer_does_not_undo_a_finished_drift_report(
    page: Page, web: WebApp, steps: Steps
) -> None:
    """The report is followed by pushes and by polls at once; a poll that was on its way when a
    push finished the run used to answer afterwards and put "Backtesting… 100%" back over the
    finished report (a CI failure). Here the first poll's answer is held until the push path has
    shown the report."""
    async with steps("a deployment that has run a few bars"):
        await sign_up_in_browser(page, unique_email("driftrace"))
        portfolio = await call(page, "POST", "/v1/portfolios", {"name": "Drift"})
        body = {"kind": "dsl", "name": "Always long", "source": ALWAYS_LONG}
        sid = (await call(page, "POST", "/v1/strategies", body))["id"]
        deployed = await call(
            page, "POST", f"/v1/strategies/{sid}/deployments", {"portfolio_id": portfolio["id"]}
        )
        await _evaluate_bars(web, deployed["id"], 3)

    async with steps("the first poll answers late, after the push finished the report"):
        release, answered = asyncio.Event(), asyncio.Event()
        held: list[str] = []

        async def hold_first_poll(route: Route) -> None:
            if held or route.request.method != "GET":
                await route.continue_()
                return
            held.append(route.request.url)
            stale = await route.fetch()  # the run as it was when the page asked
            await release.wait()
            await route.fulfill(response=stale)
            answered.set()

        sockets: list[WebSocketRoute] = []

        def pass_through(route: WebSocketRoute) -> None:
            route.connect_to_server()  # unchanged both ways; kept to add one message below
            sockets.append(route)

        await page.route_web_socket("**/v1/ws", pass_through)
        await page.route(re.compile(r"/v1/strategies/\d+/backtests/\d+$"), hold_first_poll)
        await page.goto(f"/app/strategies/{sid}#live")
        await (
            page.locator("#dep-table tbody tr")
            .first.get_by_role("button", name="Drift report")
            .click()
        )
        deadline = asyncio.get_running_loop().time() + 60
        while not held:
            assert asyncio.get_running_loop().time() < deadline, "the page never polled the report"
            await asyncio.sleep(0.05)
        run_id = int(held[0].rsplit("/", 1)[1])
        path = f"/v1/strategies/{sid}/backtests/{run_id}"
        while (await call(page, "GET", path))["status"] != "done":
            assert asyncio.get_running_loop().time() < deadline, "the report did not finish"
            await asyncio.sleep(0.2)
        # The server's "done" push may have gone out before the page subscribed: send it as the
        # server does, so the push path reads the finished run while the first poll is held.
        done = {"backtest_id": run_id, "status": "done", "progress": 1}
        message = {"channel": "backtests", "type": "backtest.progress", "data": done}
        sockets[-1].send(json.dumps(message))
        meta = page.locator("#drift-meta")
        await expect(meta).to_contain_text("Live from", timeout=30_000)
        release.set()
        await asyncio.wait_for(answered.wait(), 10)
        # the stale answer has reached the page's script: one more turn of its event loop
        await page.evaluate("() => new Promise((done) => setTimeout(done, 50))")
        await expect(meta).to_contain_text("Live from")
        await expect(page.locator("#drift-summary")).to_contain_text("Live fills")


async def test_following_a_strategys_signals_from_its_page(
    page: Page, browser: Browser, web: WebApp, steps: Steps
) -> None:
    async with steps("someone else's public strategy"):
        author = await new_context(browser, web)
        author_page = await author.new_page()
        try:
            await sign_up_in_browser(author_page, unique_email("stratauthor"))
            created = await call(
                author_page,
                "POST",
                "/v1/strategies",
                {"kind": "dsl", "name": "Followed", "source": FIXED, "visibility": "public"},
            )
        finally:
            await author.close()

    async with steps("follow it from its page, then unfollow"):
        await sign_up_in_browser(page, unique_email("stratfan"))
        await page.goto(f"/s/{created['code']}")
        follow = page.get_by_role("button", name="Follow signals", exact=True)
        await follow.click()
        await expect(
            page.get_by_role("button", name="Unfollow signals", exact=True)
        ).to_be_visible()
        await expect(page.locator("#ps-follow-state")).to_have_text(
            "You get its signals in your inbox."
        )
        mine = await call(page, "GET", "/v1/subscriptions/my")
        assert [(s["strategy_id"], s["status"]) for s in mine] == [(created["id"], "active")]
        await page.get_by_role("button", name="Unfollow signals", exact=True).click()
        await expect(page.get_by_role("button", name="Follow signals", exact=True)).to_be_visible()
        mine = await call(page, "GET", "/v1/subscriptions/my")
        assert [s["status"] for s in mine] == ["cancelled"]
