"""Asking for a self-backtest, and reading backtests with their job's progress."""

from collections.abc import Sequence
from decimal import Decimal

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from papertrade.errors import NotFound
from papertrade.market.feed import MarketFeed
from papertrade.models import JobRecord, Strategy, StrategyBacktest, StrategyVersion
from papertrade.orders.pricing import instrument_of
from papertrade.strategies.candles import MAX_BARS, expected_opens
from papertrade.strategies.errors import NotRunnable
from papertrade.strategies.schemas import BacktestCreate, BacktestRead
from papertrade.uow import AsyncWork

# A Python strategy runs bar by bar in its sandbox, under its CPU limit: a shorter period.
MAX_PYTHON_BARS = 200_000


def plan(
    strategy: Strategy,
    version: StrategyVersion,
    body: BacktestCreate,
    feed: MarketFeed | None,
    default_fees: tuple[Decimal, Decimal],
    now: int,
) -> StrategyBacktest:
    """The backtest row for a request, or a clear refusal of what cannot run."""
    symbol = (body.symbol or version.summary.get("symbol") or "").upper()
    if not symbol:
        raise NotRunnable("Name a symbol: the source sets none (e.g. 'symbol BTCUSDT').")
    instrument_of(feed, symbol)
    timeframe = body.timeframe or version.summary.get("timeframe") or "1h"
    if body.end <= body.start:
        raise NotRunnable("end must be after start.")
    bars = len(expected_opens(timeframe, body.start, body.end, now))
    if bars < 2:
        raise NotRunnable(f"The period holds {bars} closed {timeframe} bar(s); at least 2 needed.")
    most = MAX_BARS if strategy.kind == "dsl" else MAX_PYTHON_BARS
    if bars > most:
        raise NotRunnable(f"The period holds {bars} {timeframe} bars; at most {most}.")
    maker, taker = default_fees
    return StrategyBacktest(
        strategy_id=strategy.id,
        version=version.number,
        symbol=symbol,
        timeframe=timeframe,
        start_ms=body.start,
        end_ms=body.end,
        initial_balance=body.initial_balance.quantize(Decimal("0.000001")),
        maker_fee_rate=maker if body.maker_fee_rate is None else body.maker_fee_rate,
        taker_fee_rate=taker if body.taker_fee_rate is None else body.taker_fee_rate,
        status="queued",
    )


async def create(uow: AsyncWork, backtest: StrategyBacktest) -> StrategyBacktest:
    uow.session.add(backtest)
    await uow.session.flush()
    return backtest


async def list_for(session: AsyncSession, strategy: Strategy) -> Sequence[StrategyBacktest]:
    rows = await session.scalars(
        select(StrategyBacktest)
        .where(StrategyBacktest.strategy_id == strategy.id)
        .order_by(StrategyBacktest.id.desc())
    )
    return rows.all()


async def get(session: AsyncSession, strategy: Strategy, backtest_id: int) -> StrategyBacktest:
    row = await session.get(StrategyBacktest, backtest_id)
    if row is None or row.strategy_id != strategy.id:
        raise NotFound("Backtest not found.", code="backtest_not_found")
    return row


async def with_progress(session: AsyncSession, row: StrategyBacktest) -> dict[str, object]:
    """The row's fields plus its job's progress (0 to 1) and note."""
    read = BacktestRead.model_validate(row).model_dump()
    if row.status == "done":
        read["progress"] = 1.0
    elif row.job_id is not None:
        job = await session.get(JobRecord, row.job_id)
        if job is not None:
            read["progress"], read["progress_text"] = job.progress, job.progress_text
    return read
