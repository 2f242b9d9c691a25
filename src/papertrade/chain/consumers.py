"""The chain follows the outbox: a batch of a portfolio's events (fills, cancels, funding…)
chains that portfolio's new fills and ledger rows, in the batch's unit of work, so the order
path does no hashing and a crash repeats nothing (the cursor moves with the entries)."""

from collections.abc import Sequence

from papertrade.chain.service import catch_up
from papertrade.outbox.dispatcher import Consumer
from papertrade.outbox.store import StoredEvent
from papertrade.uow import AsyncWork


async def chain_portfolios(uow: AsyncWork, events: Sequence[StoredEvent]) -> None:
    touched = sorted({e.portfolio_id for e in events if e.portfolio_id is not None})
    for portfolio_id in touched:  # in id order: two writers lock heads in the same order
        await catch_up(uow.session, portfolio_id)


CHAIN = Consumer("chain.record", chain_portfolios, from_start=True, own_tables_only=True)
