"""`papertrade verify` without --url (the operator's check of the database, issue 31) checks what
the public verifiers check for period roots: that the portfolio's chain entries are exactly the
ranges the roots sign (code, first and last seq, head hash), with no gap at the start, in the
middle or at the end, and that the roots form an unbroken chain (each PTA2 root names its
predecessor's statement hash; PTA1 roots only before the first PTA2 root). Each test tampers
with the database behind a service holding two roots (events 1–4, then 5–6) and runs the
command: it exits 1, its last line `NOT VERIFIED: <the fault>`, never a traceback."""

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from io import StringIO

import pytest
from fastapi import FastAPI
from sqlalchemy import delete, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from papertrade import cli
from papertrade.chain import standalone
from papertrade.chain.attest import day_leaves
from papertrade.chain.proofs import event_hash, leaf_hash, merkle_root, statement, statement_hash
from papertrade.chain.signing import attestation_key
from papertrade.config import Settings
from papertrade.context import AppContext
from papertrade.models import Attestation, ChainEntry
from papertrade.models.portfolio import id_from_code
from tests.chain.test_period_roots import QUIET, two_roots
from tests.conftest import running_app


@dataclass
class Roots:
    app: FastAPI
    code: str
    first: str  # the key of the root of events 1–4
    second: str  # the key of the root of events 5–6

    @property
    def ctx(self) -> AppContext:
        ctx: AppContext = self.app.state.ctx
        return ctx

    def label(self, key: str) -> str:
        return standalone.label(key)

    async def tamper(self, change: Callable[[AsyncSession], Awaitable[object]]) -> None:
        async with self.ctx.transaction() as uow:
            await change(uow.session)

    async def entry(self, session: AsyncSession, seq: int) -> ChainEntry:
        found = await session.scalar(
            select(ChainEntry).where(
                ChainEntry.portfolio_id == id_from_code(self.code), ChainEntry.seq == seq
            )
        )
        assert found is not None
        return found

    async def resign(self, session: AsyncSession, key: str, signed: str | None) -> None:
        """Give root `key` another statement, signed with the service's own key (`None`: the
        PTA1 statement of an earlier release)."""
        row = await session.get(Attestation, key)
        assert row is not None
        message = (
            signed.encode() if signed is not None else statement(row.day, row.root, row.leaf_count)
        )
        row.statement = signed
        row.signature = attestation_key(self.ctx.settings).sign(message).hex()


@pytest.fixture
async def roots(
    isolated_settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[Roots]:
    settings = isolated_settings.model_copy(update=QUIET)
    monkeypatch.setattr(cli, "get_settings", lambda: settings)  # the command reads this database
    async with running_app(settings) as app:
        code = await two_roots(app)
        async with app.state.ctx.db.reader() as session:
            keys = (await session.scalars(select(Attestation.day).order_by(Attestation.day))).all()
        assert len(keys) == 2
        yield Roots(app, code, keys[0], keys[1])


async def offline(code: str) -> tuple[int, str]:
    """`papertrade verify <code>` (no --url), in process: its exit status and what it printed;
    nothing on stderr (no traceback)."""

    def command() -> tuple[int, str]:
        out, err = StringIO(), StringIO()
        with redirect_stdout(out), redirect_stderr(err):
            try:
                cli.main(["verify", code])
                status = 0
            except SystemExit as exc:
                status = int(exc.code or 0)
        assert "Traceback" not in err.getvalue(), err.getvalue()
        return status, out.getvalue()

    return await asyncio.to_thread(command)


async def fails(roots: Roots, reason: str) -> str:
    status, printed = await offline(roots.code)
    assert status == 1, printed
    last = printed.strip().splitlines()[-1]
    assert last == f"NOT VERIFIED: {reason}", printed
    assert "Traceback" not in printed
    return printed


async def test_an_intact_database_verifies(roots: Roots) -> None:
    status, printed = await offline(roots.code)
    assert status == 0, printed
    assert printed.strip().splitlines()[-1] == (
        f"VERIFIED: 6 events of {roots.code} through the root of {roots.label(roots.second)}; "
        "0 newer events not yet in a root"
    )


@pytest.mark.parametrize(
    ("seq", "reason"),
    [
        (1, "seq 1 is missing (deleted from the database)"),
        (3, "seq 3 is missing (deleted from the database)"),
        (4, "seq 4 is missing (deleted from the database)"),
    ],
    ids=["start", "middle-of-a-range", "end-of-a-range"],
)
async def test_an_entry_deleted_at_the_start_or_in_the_middle_fails(
    roots: Roots, seq: int, reason: str
) -> None:
    async def deleted(session: AsyncSession) -> None:
        await session.delete(await roots.entry(session, seq))

    await roots.tamper(deleted)
    printed = await fails(roots, reason)
    if seq == 4:  # the last event of the first root's range: the range names it
        assert (
            f"FAIL: seq 4 is withheld: the root of {roots.label(roots.first)} signs seq 1–4, "
            "the database holds up to seq 6"
        ) in printed, printed
    assert f"the root of {roots.label(roots.first)}: the entries in the database" in printed


async def test_the_last_entry_deleted_fails_naming_the_range_that_signs_it(roots: Roots) -> None:
    await roots.tamper(
        lambda session: session.execute(
            delete(ChainEntry).where(
                ChainEntry.portfolio_id == id_from_code(roots.code), ChainEntry.seq == 6
            )
        )
    )
    await fails(
        roots,
        f"seq 6 is withheld: the root of {roots.label(roots.second)} signs seq 5–6, "
        "the database holds up to seq 5",
    )


async def test_an_edited_entry_body_fails(roots: Roots) -> None:
    async def edited(session: AsyncSession) -> None:
        entry = await roots.entry(session, 3)
        assert '"qty":"0.1"' in entry.body
        entry.body = entry.body.replace('"qty":"0.1"', '"qty":"0.01"')

    await roots.tamper(edited)
    await fails(roots, "seq 3: the event does not hash to its hash (edited)")


async def test_a_signed_head_rewritten_with_its_hash_fails(roots: Roots) -> None:
    """The newest entry edited and re-hashed: the chain of entries still links up, but the
    range's head hash is not the one the root signs."""

    async def rewritten(session: AsyncSession) -> None:
        entry = await roots.entry(session, 6)
        assert '"qty":"0.2"' in entry.body
        entry.body = entry.body.replace('"qty":"0.2"', '"qty":"0.02"')
        entry.hash = event_hash(entry.body)

    await roots.tamper(rewritten)
    await fails(
        roots,
        f"seq 6: the event served is not the one the root of {roots.label(roots.second)} "
        "signed (edited)",
    )


async def test_an_entry_moved_to_another_root_fails(roots: Roots) -> None:
    """Seq 4's key moved into the second root's period: both roots' leaves change."""
    await roots.tamper(
        lambda session: session.execute(
            update(ChainEntry)
            .where(ChainEntry.portfolio_id == id_from_code(roots.code), ChainEntry.seq == 4)
            .values(day=roots.second)
        )
    )
    await fails(
        roots,
        f"the root of {roots.label(roots.first)}: the entries in the database no longer make "
        "the Merkle root it signs",
    )


async def test_a_root_that_does_not_name_its_predecessor_fails(roots: Roots) -> None:
    """The second root re-signed (with the service's own key) to name another predecessor."""

    async def relinked(session: AsyncSession) -> None:
        row = await session.get(Attestation, roots.second)
        assert row is not None and row.statement is not None
        lines = row.statement.split("\n")
        assert lines[3].startswith("prev ")
        lines[3] = "prev " + "ab" * 32
        await roots.resign(session, roots.second, "\n".join(lines))

    await roots.tamper(relinked)
    await fails(
        roots,
        f"the root of {roots.label(roots.second)} does not follow the root of "
        f"{roots.label(roots.first)} (its prev is not that root's statement hash)",
    )


async def test_a_broken_link_not_signed_by_the_key_fails_on_its_signature_too(
    roots: Roots,
) -> None:
    async def relinked(session: AsyncSession) -> None:
        row = await session.get(Attestation, roots.second)
        assert row is not None and row.statement is not None
        lines = row.statement.split("\n")
        lines[3] = "prev " + "ab" * 32
        row.statement = "\n".join(lines)  # the old signature no longer holds

    await roots.tamper(relinked)
    status, printed = await offline(roots.code)
    assert status == 1, printed
    last = printed.strip().splitlines()[-1]
    assert last.startswith(f"NOT VERIFIED: the root of {roots.label(roots.second)}: the signature")
    assert "does not follow the root of" in printed, printed


async def test_a_first_root_that_names_a_predecessor_fails(roots: Roots) -> None:
    """The very first root says it follows another: a root was removed before it."""

    async def relinked(session: AsyncSession) -> None:
        row = await session.get(Attestation, roots.first)
        assert row is not None and row.statement is not None
        lines = row.statement.split("\n")
        lines[3] = "prev " + "cd" * 32
        await roots.resign(session, roots.first, "\n".join(lines))

    await roots.tamper(relinked)
    printed = await fails(
        roots,
        f"the root of {roots.label(roots.first)} names a previous root, but no root comes "
        "before it",
    )
    assert "does not follow the root of" in printed  # and the second no longer names it


async def legacy_start(roots: Roots) -> None:
    """The first root made a PTA1 root of an earlier release (a day's key and leaves, its
    statement `PTA1:<day>:<root>:<count>`), the second re-signed to name it: the start of the
    chain of roots as migration 0020 leaves it."""

    async def change(session: AsyncSession) -> None:
        first = await roots.entry(session, 1)
        day = first.day[:10]
        old = await session.get(Attestation, roots.first)
        assert old is not None
        await session.execute(  # the first root's entries, all portfolios', keyed by their day
            update(ChainEntry).where(ChainEntry.day <= old.day).values(day=day)
        )
        leaves = await day_leaves(session, day)
        pta1 = Attestation(
            day=day,
            root=merkle_root([leaf_hash(h) for h in leaves.hashes]).hex(),
            leaf_count=len(leaves.hashes),
            ranges=old.ranges,
            statement=None,
            signature="",
            public_key=old.public_key,
            status="anchored",
            created_at=old.created_at,
        )
        await session.delete(old)
        await session.flush()
        session.add(pta1)
        await session.flush()
        await roots.resign(session, day, None)
        second = await session.get(Attestation, roots.second)
        assert second is not None and second.statement is not None
        lines = second.statement.split("\n")
        lines[3] = "prev " + statement_hash(statement(pta1.day, pta1.root, pta1.leaf_count))
        await roots.resign(session, roots.second, "\n".join(lines))

    await roots.tamper(change)


async def test_pta1_roots_are_the_legacy_start_of_the_chain(roots: Roots) -> None:
    await legacy_start(roots)
    status, printed = await offline(roots.code)
    assert status == 0, printed
    assert "roots before the first PTA2 root are daily PTA1 roots (not chained)" in printed
    assert (
        printed.strip()
        .splitlines()[-1]
        .startswith(
            f"VERIFIED: 6 events of {roots.code} through the root of {roots.label(roots.second)}"
        )
    ), printed


async def test_a_pta1_root_after_a_pta2_root_fails(roots: Roots) -> None:
    """The second root downgraded to an unchained PTA1 statement (re-signed with the key)."""
    await roots.tamper(lambda session: roots.resign(session, roots.second, None))
    await fails(
        roots,
        f"the root of {roots.label(roots.second)} is an unchained PTA1 root after the PTA2 root "
        f"of {roots.label(roots.first)}",
    )


async def test_an_unreadable_row_is_a_one_line_failure(roots: Roots) -> None:
    async def garbled(session: AsyncSession) -> None:
        entry = await roots.entry(session, 2)
        entry.body = "not json"

    await roots.tamper(garbled)
    await fails(roots, "event 2 served is not JSON")
