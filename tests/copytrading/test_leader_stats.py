"""Leader statistics (issue item 7): ROI over 7/30/90 days from the first equity snapshot of
each window, the drawdown of the equity curve, and None for a window the portfolio is younger
than (docs/social.md, "Leader statistics"). Both are time-weighted (issue 30): a deposit made
while the snapshots were taken would not count (tests/trading_api/test_returns_api.py)."""

from decimal import Decimal
from typing import Any

from fastapi import FastAPI
from sqlalchemy import update

from papertrade.copytrading.leaders import DAY_MS
from papertrade.kit.time import now_ms
from papertrade.models import EquitySnapshot, LedgerEntry, Portfolio
from tests.conftest import User


async def snapshots(app: FastAPI, portfolio_id: int, points: list[tuple[int, str]]) -> None:
    """Equity snapshots `days` ago (the equity job writes them hourly in production)."""
    now = now_ms()
    async with app.state.ctx.transaction() as uow:
        for days, equity in points:
            uow.session.add(
                EquitySnapshot(
                    portfolio_id=portfolio_id,
                    time=now - days * DAY_MS,
                    balance=Decimal(equity),
                    equity=Decimal(equity),
                )
            )


async def made_days_ago(app: FastAPI, portfolio_id: int, days: int) -> None:
    """Date the portfolio and its opening deposit back: its track record starts `days` ago."""
    then = now_ms() - days * DAY_MS
    async with app.state.ctx.transaction() as uow:
        await uow.session.execute(
            update(Portfolio).where(Portfolio.id == portfolio_id).values(created_at=then)
        )
        await uow.session.execute(
            update(LedgerEntry)
            .where(LedgerEntry.portfolio_id == portfolio_id)
            .values(created_at=then)
        )


async def test_roi_windows_and_drawdown_from_the_equity_curve(
    app: FastAPI, user: User, anon: Any
) -> None:
    led = await user.portfolio(name="lead", visibility="public", initial_balance="10000")
    path = f"/v1/copy/leaders/{led['id']}"
    young = (await anon.get(path)).json()
    assert (young["roi_7d_pct"], young["roi_30d_pct"], young["roi_90d_pct"]) == (None, None, None)

    await made_days_ago(app, led["id"], 101)
    # 100 days ago 8,000; a peak of 12,000 60 days ago; 9,000 20 days ago; 10,000 5 days ago;
    # 10,000 now (the balance: no trades).
    await snapshots(app, led["id"], [(100, "8000"), (60, "12000"), (20, "9000"), (5, "10000")])
    body = (await anon.get(path)).json()
    assert body["roi_7d_pct"] == 0  # from 10,000 5 days ago
    assert Decimal(str(body["roi_30d_pct"])).quantize(Decimal("0.01")) == Decimal("11.11")
    assert Decimal(str(body["roi_90d_pct"])).quantize(Decimal("0.01")) == Decimal("-16.67")
    assert body["max_drawdown_pct"] == 25  # 12,000 → 9,000
    assert body["win_rate"] is None  # no close yet
    assert (body["followers"], body["aum"], body["followers_pnl"]) == (0, 0, 0)


async def test_a_portfolio_younger_than_a_window_has_no_roi_for_it(
    app: FastAPI, user: User, anon: Any
) -> None:
    led = await user.portfolio(name="lead", visibility="public", initial_balance="10000")
    await snapshots(app, led["id"], [(10, "5000")])  # 10 days of history only
    body = (await anon.get(f"/v1/copy/leaders/{led['id']}")).json()
    assert body["roi_7d_pct"] is None  # no snapshot inside the last 7 days
    assert body["roi_30d_pct"] is None and body["roi_90d_pct"] is None
