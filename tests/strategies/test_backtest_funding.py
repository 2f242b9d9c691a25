"""A backtest charges exactly the funding settlements inside its period [start, end): not the
one at its exclusive end, and every one of a period longer than one page of the feed's funding
history (1,000 settlements, about 333 days), through the real app and the simulated market."""

from typing import Any

from fastapi import FastAPI

from papertrade.kit.time import now_ms
from papertrade.market.sim import SimFeed
from papertrade.strategies.backtest import funding
from tests.conftest import User
from tests.strategies.test_api import create, wait_backtest

HOUR = 3_600_000
DAY = 24 * HOUR
EIGHT_HOURS = 8 * HOUR  # funding settles at 00, 08 and 16 UTC


def source(timeframe: str) -> str:
    return (
        f"symbol BTCUSDT\ntimeframe {timeframe}\n"
        "when sma(3) crosses above sma(5) then buy 50%\n"
        "when sma(3) crosses below sma(5) then sell 50%\n"
    )


async def backtest(user: User, timeframe: str, start: int, end: int) -> dict[str, Any]:
    strategy = await create(user, source=source(timeframe))
    body = {"start": start, "end": end, "initial_balance": "5000"}
    response = await user.post(f"/v1/strategies/{strategy['id']}/backtests", json=body)
    assert response.status_code == 202, response.text
    done = await wait_backtest(user, strategy["id"], response.json()["id"])
    assert done["status"] == "done", done["error"]
    return dict(done["result"])


async def test_a_backtest_ending_on_a_funding_time_leaves_that_settlement_out(
    user: User,
) -> None:
    end = now_ms() // EIGHT_HOURS * EIGHT_HOURS - EIGHT_HOURS  # a funding time, and past
    start = end - 3 * DAY
    result = await backtest(user, "1h", start, end)
    assert result["bars"] == 72
    # start, start + 8 h, …, end − 8 h: 9 settlements inside [start, end); not the one at end
    assert result["assumptions"]["funding_events"] == 9


async def test_a_backtest_longer_than_one_page_of_funding_history_reads_every_settlement(
    app: FastAPI, user: User
) -> None:
    feed = app.state.ctx.market
    assert isinstance(feed, SimFeed)
    end = now_ms() // DAY * DAY - DAY
    start = end - 400 * DAY
    feed.first_ms = min(feed.first_ms, start - DAY)  # the simulated market reaches back 401 days
    # One request answers at most 1,000 settlements; 400 days hold 1,200.
    assert len(await feed.funding_history("BTCUSDT", start, end - 1, 1000)) == 1000
    result = await backtest(user, "1d", start, end)
    assert result["bars"] == 400
    assert result["assumptions"]["funding_events"] == 1200


async def test_in_period_pages_through_the_feed_and_keeps_the_end_exclusive() -> None:
    feed = SimFeed(seed=7, history_days=800)
    end = now_ms() // EIGHT_HOURS * EIGHT_HOURS - EIGHT_HOURS
    start = end - 700 * DAY + HOUR  # not on a funding time: the first is start + 7 h
    records = await funding.in_period(feed, "ETHUSDT", start, end)
    expected = list(range(start - HOUR + EIGHT_HOURS, end, EIGHT_HOURS))
    assert [r.funding_time for r in records] == expected
    assert len(expected) == 2099
