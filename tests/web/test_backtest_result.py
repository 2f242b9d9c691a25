"""A backtest's result reads in full dates and its price chart browses the whole period (issue
33 point 7): a 30-day run on 1-minute candles is 43,200 of them, where the chart used to show
only the last 1,500, so the first days' trades could not be seen, and on a phone the last ten
days; the period read "2026-10-29 12:00 → 12:00:00" and a trade of today only its time."""

import asyncio
import re
import time
from datetime import UTC, datetime
from typing import Any

from playwright.async_api import Browser, Page, expect

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

CROSS = """symbol BTCUSDT
timeframe 1m
when sma(30) crosses above sma(120) then buy 50%
when sma(30) crosses below sma(120) then close
"""
DAY_MS = 86_400_000
DATE_TIME = r"\d{4}-\d\d-\d\d \d\d:\d\d"


def day(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d")


def stamp(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M")


async def showing(page: Page, around: int | None = None) -> tuple[str, str]:
    """What the price chart shows once it has read its candles (and, given `around`, once
    that moment is on screen)."""
    view = page.locator("#bt-price-view")
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        text = await view.inner_text()
        if "Showing" in text and "reading more" not in text:
            start, end = shown(text)
            if around is None or start <= stamp(around) <= end:
                return start, end
        await page.wait_for_timeout(100)
    raise AssertionError(f"the chart shows {text!r}")


def shown(text: str) -> tuple[str, str]:
    """The 'Showing A → B · 1m candles' line under the price chart, as its two times."""
    found = re.search(rf"Showing ({DATE_TIME}) → ({DATE_TIME})", text)
    assert found, text
    return found.group(1), found.group(2)


async def a_month_of_minutes(page: Page) -> tuple[int, dict[str, Any]]:
    """A DSL strategy backtested over 30 days of 1-minute candles; its strategy id and run."""
    body = {"kind": "dsl", "name": "Month of minutes", "source": CROSS}
    strategy = await call(page, "POST", "/v1/strategies", body)
    sid = strategy["id"]
    end = int(datetime.now(UTC).timestamp() * 1000) // 3_600_000 * 3_600_000
    run = await call(
        page,
        "POST",
        f"/v1/strategies/{sid}/backtests",
        {"start": end - 30 * DAY_MS, "end": end, "initial_balance": "10000"},
    )
    for _ in range(600):
        done = await call(page, "GET", f"/v1/strategies/{sid}/backtests/{run['id']}")
        if done["status"] in ("done", "failed"):
            break
        await asyncio.sleep(0.5)
    assert done["status"] == "done", done.get("error")
    return sid, done


async def test_a_month_of_minutes_reads_in_full_dates_and_browses_from_its_first_day(
    browser: Browser, web: WebApp
) -> None:
    context = await new_context(browser, web, DESKTOP)
    page = await context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    steps = Steps(page, "backtest-result-desktop")
    try:
        async with steps("a 30-day backtest on 1-minute candles"):
            await sign_up_in_browser(page, unique_email("btmonth"))
            sid, run = await a_month_of_minutes(page)
            trades = run["result"]["trades"]
            first, last = trades[0], trades[-1]
            assert first["entry_time"] < run["start_ms"] + DAY_MS, first  # one on the first day
            fills = sum(len(t["fills"]) for t in trades)

        async with steps("the period and every trade in full dates"):
            await page.goto(f"/app/strategies/{sid}#backtest-{run['id']}")
            meta = page.locator("#bt-result-meta")
            await expect(meta).to_contain_text(f"{stamp(run['start_ms'])} → {stamp(run['end_ms'])}")
            rows = page.locator("#bt-trades tbody tr")
            await expect(rows.first).to_be_visible()
            newest = rows.first.locator("td").nth(1)
            await expect(newest).to_have_text(stamp(last["entry_time"]))
            period = page.locator("#bt-table tbody tr").first.locator("td").nth(2)
            await expect(period).to_have_text(f"{stamp(run['start_ms'])} → {stamp(run['end_ms'])}")

        async with steps("the price chart shows the whole period with every fill"):
            view = page.locator("#bt-price-view")
            await expect(view).to_contain_text("Showing")
            await expect(view).not_to_contain_text("reading more")
            start, end = shown(await view.inner_text())
            assert start[:10] == day(run["start_ms"]), (start, run["start_ms"])
            assert end[:10] == day(run["end_ms"]), (end, run["end_ms"])
            await expect(page.locator("#bt-price-desc")).to_contain_text(f"{fills:,} fills marked")
            await page.locator("#bt-price-title").evaluate("(e) => e.scrollIntoView()")
            await page.screenshot(path=str(ARTIFACTS / "backtest-result-desktop--price.png"))

        async with steps("the first day's trade, from its row: the chart shows its minutes"):
            oldest = page.get_by_role(
                "button", name=f"{stamp(first['entry_time'])}: show on the price chart"
            )
            await oldest.click()
            await expect(view).to_contain_text("1m candles")
            start, end = await showing(page, first["entry_time"])
            assert start > stamp(run["start_ms"]) or end < stamp(run["end_ms"]), (start, end)
            await page.locator("#bt-price").screenshot(
                path=str(ARTIFACTS / "backtest-result-desktop--first-trade.png")
            )

        async with steps("zoomed out from the newest trade, older minutes are read as needed"):
            await page.get_by_role(
                "button", name=f"{stamp(last['entry_time'])}: show on the price chart"
            ).click()
            before = await showing(page, last["entry_time"])
            box = await page.locator("#bt-price").bounding_box()
            assert box
            await page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
            for _ in range(100):
                await page.mouse.wheel(0, 600)  # zoom out
                await page.wait_for_timeout(20)
            start, end = await showing(page)
            # more than the 1,500 minutes of one read before the trade are on screen
            earliest = stamp(last["entry_time"] - 1_500 * 60_000)
            assert start < earliest, (before, start, end, earliest)
        assert not errors, errors

        async with steps("on a phone too, the whole period and its first day"):
            phone = await browser.new_context(
                base_url=web.url,
                viewport=PHONE,
                locale="en-US",
                timezone_id="UTC",
                storage_state=await context.storage_state(),
            )
            small = await phone.new_page()
            small.on("pageerror", lambda exc: errors.append(str(exc)))
            await small.goto(f"/app/strategies/{sid}#backtest-{run['id']}")
            view = small.locator("#bt-price-view")
            await expect(view).to_contain_text("Showing")
            await expect(view).not_to_contain_text("reading more")
            start, end = shown(await view.inner_text())
            assert start[:10] == day(run["start_ms"]), (start, run["start_ms"])
            assert end[:10] == day(run["end_ms"]), (end, run["end_ms"])
            await expect(small.locator("#bt-result-meta")).to_contain_text(
                f"{stamp(run['start_ms'])} → {stamp(run['end_ms'])}"
            )
            width = await small.evaluate("document.documentElement.scrollWidth")
            assert width <= PHONE["width"], width
            await small.locator("#bt-result-title").scroll_into_view_if_needed()
            await small.screenshot(path=str(ARTIFACTS / "backtest-result-phone--top.png"))
            await small.locator("#bt-price-title").evaluate("(e) => e.scrollIntoView()")
            await small.screenshot(path=str(ARTIFACTS / "backtest-result-phone--price.png"))
            await small.locator("#bt-trades").evaluate("(e) => e.scrollIntoView()")
            await small.screenshot(path=str(ARTIFACTS / "backtest-result-phone--trades.png"))
            await phone.close()
        assert not errors, errors
    finally:
        await context.close()
