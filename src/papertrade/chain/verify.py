"""Checking a track record: event hash → chain link → signed range → chain of roots → Merkle
root → anchor.

Two ways in, one set of checks: those of chain/standalone.py (which
scripts/verify_track_record.py is byte for byte).
- `published(url, code)`: what anyone can do, from the public API alone: the standalone script.
- `stored(ctx, code)`: what the operator (or an auditor with a copy of the database) can do: the
  script's checks of the events, of the chain of roots and of the signed ranges
  (`check_events`, `parse_root`, `check_roots`, `check_ranges`) run on the rows themselves;
  every root covering the portfolio is rebuilt from its leaves (where the public check follows
  one Merkle path per root), and every event from the fill or ledger row it came from, so an
  edited fill shows too.

Both return a standalone.Result; `papertrade verify` prints it and exits 1 on any problem, its
last line `NOT VERIFIED: <the first problem>`.
"""

import json
from collections.abc import Sequence
from typing import Any

from sqlalchemy import select
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncSession

from papertrade.chain import anchor, standalone
from papertrade.chain.attest import root_leaves
from papertrade.chain.entries import fill_event, ledger_event
from papertrade.chain.proofs import canonical, leaf_hash, merkle_root
from papertrade.chain.views import covering_root, entry_view, root_view
from papertrade.context import AppContext
from papertrade.models import Attestation, ChainEntry, Fill, LedgerEntry
from papertrade.models.portfolio import id_from_code


def published(
    base_url: str, code: str, public_key: str | None = None, timeout: float = 30
) -> standalone.Result:
    """Verify a portfolio's track record from the public API at `base_url`: the standalone
    script's checks (scripts/verify_track_record.py is this module, byte for byte)."""
    return standalone.verify(base_url, code, public_key, timeout)


async def stored(ctx: AppContext, code: str, public_key: str | None = None) -> standalone.Result:
    """Verify a portfolio's track record against the database itself (the module's doc). A row
    the checks cannot read, or a database that cannot be read, is the first problem."""
    result = standalone.Result(
        code, withheld="deleted from the database", served="the database holds"
    )
    try:
        async with ctx.db.reader() as session:
            await _stored(session, code, public_key, result)
    except standalone.Failed as exc:
        result.problems.insert(0, str(exc))
    except SQLAlchemyError as exc:
        reason = str(exc).strip().split("\n")[0][:200]
        result.problems.insert(0, f"the database cannot be read ({type(exc).__name__}: {reason})")
    except (KeyError, IndexError, TypeError, ValueError, AttributeError) as exc:
        result.problems.insert(0, f"a malformed row in the database ({type(exc).__name__}: {exc})")
    return result


async def _stored(
    session: AsyncSession, code: str, public_key: str | None, result: standalone.Result
) -> None:
    portfolio_id = id_from_code(code)
    if portfolio_id is None:
        raise standalone.Failed(f"{code!r} is not a portfolio code")
    entries = (
        await session.scalars(
            select(ChainEntry)
            .where(ChainEntry.portfolio_id == portfolio_id)
            .order_by(ChainEntry.seq)
        )
    ).all()
    result.events = len(entries)
    if not entries:
        return
    by_seq = standalone.check_events(result, [entry_view(e) for e in entries])
    await _signed(session, entries, by_seq, public_key, result)
    await _sources(session, entries, result)


async def _signed(
    session: AsyncSession,
    entries: Sequence[ChainEntry],
    by_seq: dict[int, dict[str, Any]],
    public_key: str | None,
    result: standalone.Result,
) -> None:
    """The chain of roots from the one that covers the portfolio's first event to the newest
    (and its link to the root before), the ranges they sign against the entries, each of those
    roots rebuilt from its leaves, and the entries after the last signed range in no root."""
    code = result.code
    first = await covering_root(session, entries[0])
    if first is None:
        result.notes.append(f"seq {entries[0].seq} and later: no root yet")
        return
    key = public_key or first.public_key
    rows = (
        await session.scalars(
            select(Attestation).where(Attestation.day >= first.day).order_by(Attestation.day)
        )
    ).all()
    before = await session.scalar(
        select(Attestation)
        .where(Attestation.day < first.day)
        .order_by(Attestation.day.desc())
        .limit(1)
    )
    chain = [
        standalone.parse_root(await root_view(session, row), code, key, result)
        for row in ([before] if before is not None else []) + list(rows)
    ]
    standalone.check_roots(result, chain, first_of_all=before is None)
    roots = chain[1:] if before is not None else chain
    expected, _heads = standalone.check_ranges(result, roots, by_seq)
    by_key = {row.day: row for row in rows}
    for root in roots:
        if code not in root.ranges:
            continue
        leaves = await root_leaves(session, by_key[root.key])
        rebuilt = merkle_root([leaf_hash(h) for h in leaves.hashes]).hex()
        if rebuilt != root.root or len(leaves.hashes) != root.leaf_count:
            result.problems.append(
                f"the root of {root.label}: the entries in the database no longer make the "
                "Merkle root it signs"
            )
    for root in roots:
        _anchors(result, root)
    newer = [entry for entry in entries if entry.seq >= expected]
    if newer:
        covering = await covering_root(session, newer[0])
        if covering is not None:
            result.problems.append(
                f"seq {newer[0].seq}: the database puts it in the root of "
                f"{standalone.label(covering.day)}, which does not sign it for {code}"
            )
        else:
            result.notes.append(f"seq {newer[0].seq}–{newer[-1].seq}: not in a root yet")


def _anchors(result: standalone.Result, root: standalone.Root) -> None:
    """The root's anchor proofs, checked against what it signs (chain/anchor.py: no
    opentimestamps package needed); a TRON memo's transaction is listed to look up."""
    found: list[str] = []
    digest = root.statement_hash if root.prev is not None else root.root
    for entry in root.view.get("anchors", []):
        if not entry.get("proof"):
            continue
        if str(entry.get("calendar", "")).startswith("tron:"):
            found += [str(a) for a in entry.get("attestations", [])]
            continue
        try:
            found += anchor.attestations(bytes.fromhex(digest), bytes.fromhex(entry["proof"]))
        except (anchor.AnchorError, ValueError) as exc:
            result.problems.append(
                f"the root of {root.label}: the proof from {entry['calendar']} fails: {exc}"
            )
    if found:
        result.notes.append(f"the root of {root.label}: anchored: {', '.join(found)}")
        result.anchored_through = root.key


async def _sources(
    session: AsyncSession, entries: Sequence[ChainEntry], result: standalone.Result
) -> None:
    """Every event rebuilt from the fill or ledger row it came from."""
    for entry in entries:
        source: Fill | LedgerEntry | None
        if entry.source == "fill":
            source = await session.get(Fill, entry.source_id)
            rebuilt = fill_event(source) if source is not None else None
        else:
            source = await session.get(LedgerEntry, entry.source_id)
            rebuilt = ledger_event(source) if source is not None else None
        if rebuilt is None:
            result.problems.append(f"seq {entry.seq}: its {entry.source} row is gone")
            continue
        published_event = json.loads(entry.body)
        rebuilt.update(seq=published_event.get("seq"), prev_hash=published_event.get("prev_hash"))
        if canonical(rebuilt) != entry.body:
            changed = sorted(k for k in rebuilt if rebuilt[k] != published_event.get(k))
            what = f"{entry.source} {entry.source_id}"
            result.problems.append(f"seq {entry.seq}: {what} was edited ({', '.join(changed)})")
