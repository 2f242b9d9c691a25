"""Keeping the chains: each portfolio's new fills and ledger rows become chain entries, in the
order they happened, each naming the hash of the one before (B7). Rows are read by id after the
head's cursors: a portfolio's writes hold its lock, so its ids commit in order.

Called by the outbox consumer (chain/consumers.py) for the portfolios a batch of events touched,
and by the daily job for every portfolio before it seals a day, so a change that raised no
durable event (a top-up) is chained by then at the latest. Rows are read as plain columns and
the entries go in with one INSERT: this runs for every fill of the service.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from hashlib import sha256
from typing import Any, cast

import orjson
from sqlalchemy import Table, bindparam, func, insert, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession

from papertrade.chain.entries import FILL_COLUMNS, LEDGER_COLUMNS, fill_event, ledger_event
from papertrade.chain.proofs import GENESIS, key_after, second_key
from papertrade.models import Attestation, ChainEntry, ChainHead, Fill, LedgerEntry, Portfolio

# A fill's own ledger rows (its PnL and fee, a liquidation's loss) are in its fill event.
FILL_LEDGER_KINDS = frozenset({"realized_pnl", "commission", "liquidation"})
READ_BATCH = 5000
_NO_LIMIT = 1 << 62
_ENTRIES = cast(Table, ChainEntry.__table__)
_HEADS = cast(Table, ChainHead.__table__)
_MOVE_HEAD = (
    update(_HEADS)
    .where(_HEADS.c.portfolio_id == bindparam("pid"))
    .values(
        seq=bindparam("seq"),
        hash=bindparam("hash"),
        last_fill_id=bindparam("fill"),
        last_ledger_id=bindparam("ledger"),
        period=bindparam("period"),
    )
)
_FILLS_AFTER_HEADS = (
    select(*FILL_COLUMNS)
    .join(_HEADS, (_HEADS.c.portfolio_id == Fill.portfolio_id) & (Fill.id > _HEADS.c.last_fill_id))
    .where(_HEADS.c.portfolio_id.in_(bindparam("pids", expanding=True)))
    .order_by(Fill.id)
    .limit(READ_BATCH)
)
_LEDGER_AFTER_HEADS = (
    select(*LEDGER_COLUMNS)
    .join(
        _HEADS,
        (_HEADS.c.portfolio_id == LedgerEntry.portfolio_id)
        & (LedgerEntry.id > _HEADS.c.last_ledger_id),
    )
    .where(_HEADS.c.portfolio_id.in_(bindparam("pids", expanding=True)))
    .order_by(LedgerEntry.id)
    .limit(READ_BATCH)
)


async def last_sealed_day(session: AsyncSession) -> str | None:
    day: str | None = await session.scalar(select(func.max(Attestation.day)))
    return day


def entry_key(ts: int, sealed_through: str | None, previous: str) -> str:
    """The key of an event at `ts`: its UTC second, but never before its portfolio's previous
    entry's key (so a root holds one unbroken range of each chain) nor at or before the newest
    root's (a row committed just after a root was taken goes into the next root, never edits
    one)."""
    key = max(second_key(ts), previous)
    if sealed_through is not None and key <= sealed_through:
        return key_after(sealed_through)
    return key


async def _create_heads(session: AsyncSession, portfolio_ids: Sequence[int]) -> None:
    """Give the portfolios a genesis head where they have none. Two writers may both find a head
    missing (the outbox consumer and the daily job; on PostgreSQL a lock on an absent row locks
    nothing): the second insert is skipped, and both then lock the one row."""
    dialect = session.get_bind().dialect.name
    statement = (postgresql.insert if dialect == "postgresql" else sqlite.insert)(_HEADS)
    await session.execute(
        statement.on_conflict_do_nothing(index_elements=["portfolio_id"]),
        [_Head(pid, 0, GENESIS, 0, 0, "").row() for pid in portfolio_ids],
    )


async def _head(session: AsyncSession, portfolio_id: int) -> ChainHead:
    head = await session.get(ChainHead, portfolio_id, with_for_update=True)
    if head is None:
        await _create_heads(session, [portfolio_id])
        head = await session.get(ChainHead, portfolio_id, with_for_update=True)
        assert head is not None  # created above or by the writer that raced us
    return head


async def catch_up(session: AsyncSession, portfolio_id: int) -> int:
    """Chain the portfolio's fills and ledger rows not chained yet; returns how many."""
    head = await _head(session, portfolio_id)
    sealed: list[str | None] = []  # read once, and only when an event is from an earlier day
    added = 0
    while True:
        fills = (
            await session.execute(
                select(*FILL_COLUMNS)
                .where(Fill.portfolio_id == portfolio_id, Fill.id > head.last_fill_id)
                .order_by(Fill.id)
                .limit(READ_BATCH)
            )
        ).all()
        ledger = (
            await session.execute(
                select(*LEDGER_COLUMNS)
                .where(
                    LedgerEntry.portfolio_id == portfolio_id,
                    LedgerEntry.id > head.last_ledger_id,
                )
                .order_by(LedgerEntry.id)
                .limit(READ_BATCH)
            )
        ).all()
        if not fills and not ledger:
            return added
        # A full batch of one kind may stop before rows of the other kind that came earlier:
        # take only what happened up to the earlier of the two batches' last rows.
        horizon = min(
            fills[-1].created_at if len(fills) == READ_BATCH else _NO_LIMIT,
            ledger[-1].created_at if len(ledger) == READ_BATCH else _NO_LIMIT,
        )
        events: list[tuple[int, int, str, int, dict[str, Any]]] = [
            (f.created_at, 0, "fill", f.id, fill_event(f)) for f in fills if f.created_at <= horizon
        ]
        events += [
            (e.created_at, 1, "ledger", e.id, ledger_event(e))
            for e in ledger
            if e.created_at <= horizon and e.kind not in FILL_LEDGER_KINDS
        ]
        events.sort(key=lambda e: (e[0], e[1], e[3]))
        if events and not sealed:
            # Read after the head is locked: a root taken meanwhile is seen, so no entry joins
            # a root already taken (the sealing job holds every head while it seals).
            sealed.append(await last_sealed_day(session))
        if events:
            rows = _link(head, events, sealed[0] if sealed else None)
            await session.execute(insert(_ENTRIES), rows)
        added += len(events)
        head.last_fill_id = max(
            [f.id for f in fills if f.created_at <= horizon], default=head.last_fill_id
        )
        head.last_ledger_id = max(
            [e.id for e in ledger if e.created_at <= horizon], default=head.last_ledger_id
        )


async def catch_up_many(session: AsyncSession, portfolio_ids: Sequence[int]) -> int:
    """catch_up for several portfolios with a fixed number of statements, whatever their
    number (what the outbox consumer does every round): lock their heads, read every new fill
    and ledger row of all of them at once, hash in one pass, insert every entry and move every
    head with one executemany each. A backlog larger than one read (READ_BATCH) is left to
    catch_up, portfolio by portfolio, which pages through it."""
    pids = sorted(set(portfolio_ids))  # in id order: two writers lock heads in the same order
    if not pids:
        return 0
    heads = await _locked_heads(session, pids)
    if len(heads) < len(pids):
        await _create_heads(session, [pid for pid in pids if pid not in heads])
        heads = await _locked_heads(session, pids)
    fills = (await session.execute(_FILLS_AFTER_HEADS, {"pids": pids})).all()
    ledger = (await session.execute(_LEDGER_AFTER_HEADS, {"pids": pids})).all()
    if not fills and not ledger:
        return 0
    if len(fills) == READ_BATCH or len(ledger) == READ_BATCH:
        added = 0
        for pid in pids:
            added += await catch_up(session, pid)
        return added
    by_portfolio = _events_by_portfolio(fills, ledger)
    sealed = await last_sealed_day(session) if by_portfolio else None  # see catch_up
    entries: list[dict[str, Any]] = []
    for pid, events in by_portfolio.items():
        events.sort(key=lambda e: (e[0], e[1], e[3]))
        entries += _link(heads[pid], events, sealed)
    if entries:
        await session.execute(insert(_ENTRIES), entries)
    for f in fills:
        head = heads[f.portfolio_id]
        head.last_fill_id = max(head.last_fill_id, f.id)
    for e in ledger:
        head = heads[e.portfolio_id]
        head.last_ledger_id = max(head.last_ledger_id, e.id)
    moved = {f.portfolio_id for f in fills} | {e.portfolio_id for e in ledger}
    await session.execute(_MOVE_HEAD, [heads[pid].moved() for pid in sorted(moved)])
    return len(entries)


async def _locked_heads(session: AsyncSession, pids: list[int]) -> dict[int, "_Head"]:
    rows = await session.execute(
        select(_HEADS).where(_HEADS.c.portfolio_id.in_(pids)).order_by(_HEADS.c.portfolio_id)
        .with_for_update()
    )  # fmt: skip
    return {row.portfolio_id: _Head(*row) for row in rows}


def _events_by_portfolio(
    fills: Sequence[Any], ledger: Sequence[Any]
) -> dict[int, list[tuple[int, int, str, int, dict[str, Any]]]]:
    """Each portfolio's new chain events, not yet in order (as in catch_up)."""
    by_portfolio: dict[int, list[tuple[int, int, str, int, dict[str, Any]]]] = {}
    for f in fills:
        by_portfolio.setdefault(f.portfolio_id, []).append(
            (f.created_at, 0, "fill", f.id, fill_event(f))
        )
    for e in ledger:
        if e.kind not in FILL_LEDGER_KINDS:
            by_portfolio.setdefault(e.portfolio_id, []).append(
                (e.created_at, 1, "ledger", e.id, ledger_event(e))
            )
    return by_portfolio


@dataclass(slots=True)
class _Head:
    """A chain head as plain values (the batched path moves it in memory, then writes it)."""

    portfolio_id: int
    seq: int
    hash: str
    last_fill_id: int
    last_ledger_id: int
    period: str

    def row(self) -> dict[str, Any]:
        return {
            "portfolio_id": self.portfolio_id,
            "seq": self.seq,
            "hash": self.hash,
            "last_fill_id": self.last_fill_id,
            "last_ledger_id": self.last_ledger_id,
            "period": self.period,
        }

    def moved(self) -> dict[str, Any]:
        return {
            "pid": self.portfolio_id,
            "seq": self.seq,
            "hash": self.hash,
            "fill": self.last_fill_id,
            "ledger": self.last_ledger_id,
            "period": self.period,
        }


def _hash_body(event: dict[str, Any]) -> tuple[str, str]:
    """(canonical JSON, its SHA-256): orjson's sorted compact output is byte for byte what
    proofs.canonical (the verifier's stdlib json) gives for these events, about 8 times
    faster (tests/chain/test_proofs.py checks the two agree, odd characters included)."""
    body = orjson.dumps(event, option=orjson.OPT_SORT_KEYS)
    return body.decode(), sha256(body).hexdigest()


def _link(
    head: "ChainHead | _Head",
    events: list[tuple[int, int, str, int, dict[str, Any]]],
    sealed_through: str | None,
) -> list[dict[str, Any]]:
    """The entries' rows, each event given its seq and the previous hash; moves the head."""
    rows = []
    seq, previous, key = head.seq, head.hash, head.period
    for ts, _order, source, source_id, event in events:
        seq += 1
        event["seq"] = seq
        event["prev_hash"] = previous
        body, previous = _hash_body(event)
        key = entry_key(ts, sealed_through, key)
        rows.append(
            {
                "portfolio_id": head.portfolio_id,
                "seq": seq,
                "day": key,
                "source": source,
                "source_id": source_id,
                "ts": ts,
                "body": body,
                "hash": previous,
            }
        )
    head.seq, head.hash, head.period = seq, previous, key
    return rows


async def catch_up_all(session: AsyncSession) -> int:
    """Chain every portfolio's new rows (the daily job does this before it seals a day)."""
    added = 0
    for portfolio_id in (await session.scalars(select(Portfolio.id).order_by(Portfolio.id))).all():
        added += await catch_up(session, portfolio_id)
    return added
