"""A stop that fires is never silent (issue 33, point 1): the toast, the order history, the
fills and the inbox say that the stop-loss sold, and the take-profit it cancelled stays in the
history with its reason."""

from playwright.async_api import Page, expect

from tests.conftest import unique_email
from tests.trading_api.helpers import set_price
from tests.web.conftest import Steps, WebApp, call, listening, sign_up_in_browser


async def test_a_fired_stop_loss_says_so_everywhere(page: Page, web: WebApp, steps: Steps) -> None:
    await set_price(web.app, "DOGEUSDT", "0.1")
    async with steps("a DOGEUSDT long protected by a take-profit and a stop-loss"):
        await sign_up_in_browser(page, unique_email("stopfired"))
        made = await call(page, "POST", "/v1/portfolios", {"name": "Stops"})
        pid = made["id"]
        body = {"portfolio_id": pid, "symbol": "DOGEUSDT", "side": "buy", "quantity": "1000"}
        await call(page, "POST", "/v1/order", body | {"type": "market"})
        tpsl = {"take_profit": "0.12", "stop_loss": "0.09"}
        await call(page, "POST", f"/v1/portfolios/{pid}/positions/DOGEUSDT/tpsl", tpsl)
        await page.goto(f"/app/portfolios/{pid}")
        await expect(page.locator('#positions-table tr[data-symbol="DOGEUSDT"]')).to_have_count(1)
        await listening(web, f"orders:{pid}")  # the toast is pushed, not read

    async with steps("the mark falls through the stop: a notice says the stop-loss sold"):
        await set_price(web.app, "DOGEUSDT", "0.0895")
        notice = page.locator(".toast", has_text="Your stop-loss sold")
        await expect(notice).to_contain_text("1,000 DOGEUSDT at 0.08950", timeout=20_000)
        await expect(page.locator('#positions-table tr[data-symbol="DOGEUSDT"]')).to_have_count(0)

    async with steps("the order history names the stop and keeps the cancelled take-profit"):
        await page.click("#tab-history")
        fired = page.locator('#history-table tbody tr[data-placed-by="stop-loss"]')
        await expect(fired).to_contain_text("stop-loss at 0.09000", timeout=20_000)
        await expect(fired).to_contain_text("filled")
        cancelled = page.locator("#history-table tbody tr[data-conditional-id]")
        await expect(cancelled).to_have_count(1)
        await expect(cancelled).to_contain_text("take profit market")
        await expect(cancelled).to_contain_text("canceled")
        await expect(cancelled).to_contain_text("the position was closed (one-cancels-other)")
        opened = page.locator('#history-table tbody tr[data-placed-by="you"]')
        await expect(opened).to_have_count(1)

    async with steps("the fills say which fill the stop-loss made"):
        await page.click("#tab-fills")
        rows = page.locator("#fills-table tbody tr")
        await expect(rows).to_have_count(2)
        await expect(rows.first.locator("td.placed-by")).to_have_text("stop-loss")
        await expect(rows.last.locator("td.placed-by")).to_have_text("you")

    async with steps("the inbox says the stop-loss filled"):
        await page.goto("/app/inbox")
        item = page.locator("#inbox-list li", has_text="DOGEUSDT stop-loss filled")
        await expect(item).to_contain_text("Your stop-loss sold 1,000 DOGEUSDT", timeout=20_000)
