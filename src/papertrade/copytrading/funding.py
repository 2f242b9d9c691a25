"""Funding counts in a copy's net PnL (B3: realised PnL − fees − funding): a durable-outbox
consumer of `funding.charged` on the followers' portfolios. The funding of a symbol goes to the
live relation that last copied a trade in that symbol into that portfolio."""

from collections.abc import Sequence
from decimal import Decimal

from sqlalchemy import select

from papertrade.copytrading import service as copies
from papertrade.db import CURRENT
from papertrade.models import CopyRelation, CopyTrade
from papertrade.outbox.dispatcher import Consumer
from papertrade.outbox.store import StoredEvent
from papertrade.uow import AsyncWork

CHARGED = "funding.charged"


async def count_funding(uow: AsyncWork, events: Sequence[StoredEvent]) -> None:
    charged = [e for e in events if e.type == CHARGED and e.portfolio_id is not None]
    if not charged:
        return
    session = uow.session
    portfolios = {e.portfolio_id for e in charged}
    relations = {
        r.id: r
        for r in await session.scalars(
            select(CopyRelation)
            .where(
                CopyRelation.follower_portfolio_id.in_(portfolios),
                CopyRelation.status != copies.ENDED,
            )
            .order_by(CopyRelation.id)
            # Locked, in the mirror's order, and read as they are now: an unfollow closing the
            # copied positions adds to the same net PnL in its own transaction, and a stale
            # read here would write its change away.
            .with_for_update(key_share=True)
            .execution_options(**CURRENT)
        )
    }
    if not relations:
        return
    latest: dict[tuple[int, str], tuple[int, int]] = {}  # (portfolio, symbol) → (trade, relation)
    rows = await session.execute(
        select(CopyTrade.id, CopyTrade.relation_id, CopyTrade.symbol).where(
            CopyTrade.relation_id.in_(list(relations)), CopyTrade.status == "copied"
        )
    )
    for trade_id, relation_id, symbol in rows.all():
        key = (relations[relation_id].follower_portfolio_id, symbol)
        if key not in latest or trade_id > latest[key][0]:
            latest[key] = (trade_id, relation_id)
    for event in charged:
        assert event.portfolio_id is not None
        found = latest.get((event.portfolio_id, str(event.data["symbol"])))
        if found is not None:
            relations[found[1]].cum_net_pnl += Decimal(event.data["amount"])


# It writes only copy relations, so the SQLite order writer keeps what it remembers.
FUNDING = Consumer("copy.funding", count_funding, types=frozenset({CHARGED}), own_tables_only=True)
