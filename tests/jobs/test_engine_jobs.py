"""The engine's periodic work as jobs: equity snapshots on a schedule, funding through the queue."""

import asyncio
import dataclasses
from decimal import Decimal

from fastapi import FastAPI

from papertrade.config import Settings
from papertrade.engine.jobs import EQUITY_SNAPSHOTS, SETTLE_FUNDING
from papertrade.models.job import JobRecord
from papertrade.trading.funding import FUNDING_INTERVAL_MS
from tests.conftest import running_app, sign_up
from tests.jobs.helpers import runs_of, wait_for_job
from tests.trading_api.helpers import equity, market, set_price


async def _marking(app: FastAPI, until: int) -> list[JobRecord]:
    """The succeeded snapshot runs that marked a point and began by `until`."""
    return [
        r
        for r in await runs_of(app, EQUITY_SNAPSHOTS.name)
        if r.status == "succeeded"
        and r.result["marked"] >= 1
        and r.started_at is not None
        and r.started_at <= until
    ]


async def test_equity_snapshots_are_written_by_the_scheduled_job(
    isolated_settings: Settings,
) -> None:
    settings = isolated_settings.model_copy(update={"snapshot_interval_s": 1})
    async with running_app(settings) as app:
        user = await sign_up(app)
        pid = (await user.portfolio())["id"]
        deadline = asyncio.get_running_loop().time() + 30
        while len(curve := (await user.get(f"/v1/portfolios/{pid}/equity-curve")).json()) < 2:
            assert asyncio.get_running_loop().time() < deadline, curve
            await asyncio.sleep(0.1)
        # Every point of the curve was marked by one run of the job, which says how many it
        # marked; a run's record says so once the run has ended, a moment after its commit.
        times = {point["time"] for point in curve}
        while len(marking := await _marking(app, max(times))) < len(curve):
            assert asyncio.get_running_loop().time() < deadline, (curve, marking)
            await asyncio.sleep(0.1)
        runs = [r for r in await runs_of(app, EQUITY_SNAPSHOTS.name) if r.status == "succeeded"]
        await user.client.aclose()
    assert all(point["equity"] == 10000 for point in curve)
    assert len(marking) >= len(curve) >= 2
    assert all(r.attempts == 1 and r.arguments == {} for r in runs)


async def test_funding_is_settled_through_the_job_exactly_once(
    isolated_settings: Settings,
) -> None:
    # A simulation that does not tick by itself: only the quotes below reach the engine.
    settings = isolated_settings.model_copy(update={"sim_tick_ms": 3_600_000})
    async with running_app(settings) as app:
        engine = app.state.engine
        longs, shorts = await sign_up(app), await sign_up(app)
        await set_price(app, "LINKUSDT", "20")
        long_pid = (await longs.portfolio())["id"]
        short_pid = (await shorts.portfolio())["id"]
        await market(longs, long_pid, "LINKUSDT", "buy", "100")
        await market(shorts, short_pid, "LINKUSDT", "sell", "100")
        before_long = (await equity(longs, long_pid))["balance"]
        before_short = (await equity(shorts, short_pid))["balance"]

        seen = app.state.ctx.market.quote("LINKUSDT")
        due, mark = seen.next_funding_time, seen.mark_price
        await engine.on_tick(dataclasses.replace(seen, funding_rate=Decimal("0.001")))
        after_funding = dataclasses.replace(seen, next_funding_time=due + FUNDING_INTERVAL_MS)
        await engine.on_tick(after_funding)  # the funding time passed: the engine enqueues it
        await engine.on_tick(after_funding)  # the same time again: nothing more to settle

        runs = await runs_of(app, SETTLE_FUNDING.name)
        assert len(runs) == 1
        settled = await wait_for_job(app, runs[0].id, "succeeded")
        assert settled.arguments == {
            "symbol": "LINKUSDT",
            "funding_time": due,
            "rate": "0.001",
            "mark": str(mark),
        }
        assert settled.result == 2  # both positions

        # Delivered again (a worker died before acknowledging it): nobody is charged twice.
        again = await app.state.jobs.enqueue(
            SETTLE_FUNDING, symbol="LINKUSDT", funding_time=due, rate=Decimal("0.001"), mark=mark
        )
        assert (await wait_for_job(app, again, "succeeded")).result == 0
        assert len(await runs_of(app, SETTLE_FUNDING.name)) == 2

        # Longs pay 100 × 20 × 0.1 % to shorts, once.
        assert (await equity(longs, long_pid))["balance"] == round(before_long - 2, 6)
        assert (await equity(shorts, short_pid))["balance"] == round(before_short + 2, 6)
        for user, pid, amount in ((longs, long_pid, -2), (shorts, short_pid, 2)):
            ledger = (await user.get(f"/v1/portfolios/{pid}/ledger")).json()
            assert [e["amount"] for e in ledger if e["kind"] == "funding"] == [amount]
            await user.client.aclose()
