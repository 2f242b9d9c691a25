"""Checking a track record: event hash → chain link → Merkle path → signed root → anchor.

Two ways in, one set of checks:
- `published(url, code)`: what anyone can do, from the public API alone (the events as
  published, one inclusion proof per attested day: the chain links every earlier event to it).
- `stored(ctx, code)`: what the operator (or an auditor with a copy of the database) can do on
  top: rebuild every event from the fill or ledger row it came from, so an edited fill shows.

Each returns a Report; `papertrade verify` prints it and exits non-zero on any problem.
"""

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select

from papertrade.chain import anchor, standalone
from papertrade.chain.attest import root_leaves
from papertrade.chain.entries import fill_event, ledger_event
from papertrade.chain.proofs import (
    GENESIS,
    canonical,
    event_hash,
    leaf_hash,
    merkle_root,
    root_from_path,
)
from papertrade.chain.signing import signature_holds
from papertrade.context import AppContext
from papertrade.models import ChainEntry, Fill, LedgerEntry
from papertrade.models.portfolio import id_from_code


@dataclass
class Report:
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    events: int = 0
    attested_through: str | None = None

    @property
    def ok(self) -> bool:
        return not self.problems and self.events > 0

    def render(self) -> str:
        lines = [f"events checked: {self.events}"]
        lines += [f"  note: {n}" for n in self.notes]
        lines += [f"  FAIL: {p}" for p in self.problems]
        if self.ok:
            through = self.attested_through or "no attested day yet"
            lines.append(f"VERIFIED: chain intact; attested through {through}")
        else:
            lines.append("VERIFICATION FAILED" if self.problems else "NOTHING TO VERIFY")
        return "\n".join(lines)


def check_links(report: Report, events: Sequence[tuple[str, str]]) -> None:
    """(canonical body, published hash) in seq order: each hash recomputes, each event names
    the previous one's hash, seq runs 1, 2, 3…"""
    previous = GENESIS
    for expected_seq, (body, published_hash) in enumerate(events, start=1):
        report.events += 1
        if event_hash(body) != published_hash:
            report.problems.append(f"seq {expected_seq}: the event does not hash to its hash")
        try:
            event = json.loads(body)
        except ValueError:
            report.problems.append(f"seq {expected_seq}: the event is not JSON")
            continue
        if canonical(event) != body:
            report.problems.append(f"seq {expected_seq}: the event is not in canonical form")
        if event.get("seq") != expected_seq:
            report.problems.append(f"seq {expected_seq}: the event says seq {event.get('seq')}")
        if event.get("prev_hash") != previous:
            report.problems.append(f"seq {expected_seq}: prev_hash breaks the chain")
        previous = published_hash


def check_root(report: Report, root: dict[str, Any], public_key: str) -> None:
    """The root's signature by the trusted key, and its anchors."""
    day = root["day"]
    if root["public_key"] != public_key:
        report.problems.append(f"{day}: signed by another key ({root['public_key']})")
    message = str(root["statement"]).encode()
    if not signature_holds(public_key, message, root["signature"]):
        report.problems.append(f"{day}: the signature over the root does not hold")
    found: list[str] = []
    for entry in root.get("anchors", []):
        if not entry.get("proof"):
            continue
        if str(entry.get("calendar", "")).startswith("tron:"):
            # a TRON memo transaction: its id (and block) to look up on any TRON explorer,
            # whose memo must read the signed statement above
            found += [str(a) for a in entry.get("attestations", [])]
            continue
        try:
            digest = root["statement_hash"] if root["format"] == "PTA2" else root["root"]
            found += anchor.attestations(bytes.fromhex(digest), bytes.fromhex(entry["proof"]))
        except (anchor.AnchorError, ValueError) as exc:
            report.problems.append(f"{day}: the proof from {entry['calendar']} fails: {exc}")
    if found:
        report.notes.append(f"{day}: root {root['root'][:16]}… anchored: {', '.join(found)}")
        report.attested_through = max(report.attested_through or day, day)
    else:
        report.notes.append(f"{day}: root signed, not anchored yet")


def check_inclusion(report: Report, proof: dict[str, Any]) -> None:
    entry, root = proof["entry"], proof["root"]
    leaf = leaf_hash(entry["hash"])
    try:
        rebuilt = root_from_path(
            leaf,
            int(proof["leaf_index"]),
            int(proof["tree_size"]),
            [bytes.fromhex(p) for p in proof["path"]],
        )
    except ValueError as exc:
        report.problems.append(f"seq {entry['seq']}: the Merkle path is malformed: {exc}")
        return
    if rebuilt.hex() != root["root"]:
        report.problems.append(
            f"seq {entry['seq']}: the Merkle path does not lead to the {root['day']} root"
        )
    if int(proof["tree_size"]) != int(root["leaf_count"]):
        report.problems.append(f"{root['day']}: the proof's tree size is not the root's")


def published(
    base_url: str, code: str, public_key: str | None = None, timeout: float = 30
) -> "standalone.Result":
    """Verify a portfolio's track record from the public API at `base_url`: the standalone
    script's checks (scripts/verify_track_record.py is this module, byte for byte)."""
    return standalone.verify(base_url, code, public_key, timeout)


async def stored(ctx: AppContext, code: str, public_key: str | None = None) -> Report:
    """Verify a portfolio's track record against the database itself: every event rebuilt from
    its fill or ledger row, every day's root rebuilt from its leaves."""
    from papertrade.chain.views import covering_root, root_view

    report = Report()
    portfolio_id = id_from_code(code)
    if portfolio_id is None:
        report.problems.append(f"{code!r} is not a portfolio code")
        return report
    async with ctx.db.reader() as session:
        entries = (
            await session.scalars(
                select(ChainEntry)
                .where(ChainEntry.portfolio_id == portfolio_id)
                .order_by(ChainEntry.seq)
            )
        ).all()
        check_links(report, [(e.body, e.hash) for e in entries])
        for entry in entries:
            source: Fill | LedgerEntry | None
            if entry.source == "fill":
                source = await session.get(Fill, entry.source_id)
                rebuilt = fill_event(source) if source is not None else None
            else:
                source = await session.get(LedgerEntry, entry.source_id)
                rebuilt = ledger_event(source) if source is not None else None
            if rebuilt is None:
                report.problems.append(f"seq {entry.seq}: its {entry.source} row is gone")
                continue
            published_event = json.loads(entry.body)
            rebuilt.update(
                seq=published_event.get("seq"), prev_hash=published_event.get("prev_hash")
            )
            if canonical(rebuilt) != entry.body:
                changed = sorted(k for k in rebuilt if rebuilt[k] != published_event.get(k))
                what = f"{entry.source} {entry.source_id}"
                report.problems.append(f"seq {entry.seq}: {what} was edited ({', '.join(changed)})")
        checked: set[str] = set()
        for entry in entries:
            attestation = await covering_root(session, entry)
            if attestation is None:
                report.notes.append(f"seq {entry.seq} and later: no root yet")
                break
            if attestation.day in checked:
                continue
            checked.add(attestation.day)
            leaves = await root_leaves(session, attestation)
            rebuilt_root = merkle_root([leaf_hash(h) for h in leaves.hashes]).hex()
            if rebuilt_root != attestation.root or len(leaves.hashes) != attestation.leaf_count:
                report.problems.append(
                    f"{attestation.day}: the events no longer make its signed root"
                )
            check_root(
                report, await root_view(session, attestation), public_key or attestation.public_key
            )
    return report
