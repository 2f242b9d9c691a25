"""Track records from the database: a portfolio's cash flows (ledger rows of FLOW_KINDS) and
equity marks (equity snapshots), with its equity now, through trading.returns.track_record.

Every return and drawdown figure is computed by `records` (docs/trading.md, "Returns"): the
equity read, the equity curves, the Square, the public page and the leader statistics.
"""

from collections import defaultdict
from collections.abc import Mapping, Sequence
from decimal import Decimal

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from papertrade.accounts import service
from papertrade.kit.decimals import money
from papertrade.market.feed import MarketFeed
from papertrade.models import EquitySnapshot, LedgerEntry, Portfolio
from papertrade.trading.enums import LedgerKind
from papertrade.trading.returns import FLOW_KINDS, Flow, Mark, Record, track_record
from papertrade.uow import AsyncWork

_KINDS = sorted(kind.value for kind in FLOW_KINDS)


async def records(
    session: AsyncSession, portfolios: Sequence[Portfolio], now: Mapping[int, Mark] | None
) -> dict[int, Record]:
    """Each portfolio's track record, ending with its mark `now[portfolio.id]` (the equity now;
    without `now`, with its latest equity snapshot)."""
    ids = [p.id for p in portfolios]
    if not ids:
        return {}
    flows: dict[int, list[Flow]] = defaultdict(list)
    for row in await session.execute(
        select(
            LedgerEntry.portfolio_id,
            LedgerEntry.created_at,
            LedgerEntry.kind,
            LedgerEntry.amount,
            LedgerEntry.balance_after,
        )
        .where(LedgerEntry.portfolio_id.in_(ids), LedgerEntry.kind.in_(_KINDS))
        .order_by(LedgerEntry.portfolio_id, LedgerEntry.id)
    ):
        flows[row.portfolio_id].append(
            Flow(
                time=row.created_at,
                amount=row.amount,
                balance_after=row.balance_after,
                reset=row.kind == LedgerKind.RESET.value,
            )
        )
    marks: dict[int, list[Mark]] = defaultdict(list)
    for portfolio_id, time, equity, balance in await session.execute(
        select(
            EquitySnapshot.portfolio_id,
            EquitySnapshot.time,
            EquitySnapshot.equity,
            EquitySnapshot.balance,
        )
        .where(EquitySnapshot.portfolio_id.in_(ids))
        .order_by(EquitySnapshot.portfolio_id, EquitySnapshot.time, EquitySnapshot.id)
    ):
        marks[portfolio_id].append(Mark(time=time, equity=equity, balance=balance))
    return {
        p.id: track_record(
            flows[p.id], [*marks[p.id], *([now[p.id]] if now else [])], start=p.created_at
        )
        for p in portfolios
    }


async def mark_before_flow(uow: AsyncWork, market: MarketFeed | None, portfolio: Portfolio) -> None:
    """Record the equity just before a cash flow is booked (call it first, in the flow's unit of
    work): the flow's sub-period then ends at the exact equity, open positions included."""
    state = await service.account_state(uow.session, market, portfolio)
    uow.session.add(
        EquitySnapshot(
            portfolio_id=portfolio.id,
            time=uow.now(),  # the flow's row is as late or later (track_record orders a tie)
            balance=portfolio.balance,
            equity=money(state.equity),
        )
    )


def now_mark(time: int, equity: Decimal, wallet_balance: Decimal) -> Mark:
    """The equity now as a mark; `wallet_balance` is the balance (isolated margin not counted)."""
    return Mark(time=time, equity=equity, balance=wallet_balance)
