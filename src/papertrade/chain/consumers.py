"""The chain follows the outbox: a batch of events (fills, cancels, funding…) chains the new
fills and ledger rows of every portfolio it touched, in the batch's unit of work and with a fixed
number of statements for all of them (service.catch_up_many), so the order path does no hashing
and a crash repeats nothing (the cursor moves with the entries)."""

from collections.abc import Sequence

from papertrade.chain.service import catch_up_many
from papertrade.outbox.dispatcher import Consumer
from papertrade.outbox.store import StoredEvent
from papertrade.uow import AsyncWork


async def chain_portfolios(uow: AsyncWork, events: Sequence[StoredEvent]) -> None:
    touched = {e.portfolio_id for e in events if e.portfolio_id is not None}
    await catch_up_many(uow.session, sorted(touched))


CHAIN = Consumer("chain.record", chain_portfolios, from_start=True, own_tables_only=True)
