"""/v1/chain: the attested track record, readable by anyone (docs/attestation.md)."""

import re
from typing import Annotated, Any

from fastapi import APIRouter, Path, Query
from sqlalchemy import or_, select

from papertrade.auth.v1 import Ctx, MaybeCaller
from papertrade.chain import views
from papertrade.chain.schemas import (
    AttestationKey,
    ChainEvents,
    ChainStatus,
    InclusionProof,
    Root,
    RootPage,
)
from papertrade.chain.signing import attestation_key, public_hex
from papertrade.kit.ids import Id
from papertrade.models import Attestation, AttestationAnchor, ChainHead
from papertrade.portfolios import service as portfolio_service

router = APIRouter(tags=["chain"])
KEY = r"^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}:\d{2}Z)?$"  # a root's key, or a day
Day = Annotated[str, Path(pattern=re.compile(KEY).pattern, max_length=20)]
Seq = Annotated[int, Path(ge=1, le=2**62)]


@router.get("/chain/key", response_model=AttestationKey)
async def key(ctx: Ctx) -> AttestationKey:
    """The public half of the key that signs every day's root, and what it signs."""
    return AttestationKey(
        algorithm="Ed25519",
        public_key=public_hex(attestation_key(ctx.settings)),
        statement=(
            "PTA2\nthrough <key>\nroot <root hex> <leaf_count>\nprev <previous statement "
            "sha256>\n<code> <first seq> <last seq> <head hash> (a line per portfolio); "
            "earlier daily roots: PTA1:<day>:<root hex>:<leaf_count>"
        ),
    )


@router.get("/chain/roots", response_model=RootPage)
async def roots(
    ctx: Ctx,
    before: Annotated[str | None, Query(pattern=KEY, max_length=20)] = None,
    after: Annotated[str | None, Query(pattern=KEY, max_length=20)] = None,
    limit: Annotated[int, Query(ge=1, le=100)] = 30,
) -> dict[str, Any]:
    """The roots, newest first (oldest first with `after`: the roots after that key, to walk
    the chain of roots forward), with signed statements and anchor proofs."""
    async with ctx.db.reader() as session:
        if after is not None:
            query = select(Attestation).where(Attestation.day > after).order_by(Attestation.day)
        else:
            query = select(Attestation).order_by(Attestation.day.desc())
        query = query.limit(limit)
        if before is not None:
            query = query.where(Attestation.day < before)
        found = (await session.scalars(query)).all()
        return {"items": [await views.root_view(session, a) for a in found]}


@router.get("/chain/roots/{day}", response_model=Root)
async def root(day: Day, ctx: Ctx) -> dict[str, Any]:
    """One root by its key (a bare day: that day's newest): signed statement, signature, public
    key, per-portfolio ranges, anchors and the .ots file."""
    async with ctx.db.reader() as session:
        return await views.root_view(session, await views.get_root(session, day))


@router.get("/chain/queue", response_model=RootPage)
async def queue(ctx: Ctx) -> dict[str, Any]:
    """The signing queue: signed roots some calendar has not taken yet, with its attempts."""
    async with ctx.db.reader() as session:
        unfinished = select(AttestationAnchor.day).where(
            AttestationAnchor.status.in_(("queued", "retrying", "sending"))
        )
        waiting = (
            await session.scalars(
                select(Attestation)
                .where(or_(Attestation.status == "queued", Attestation.day.in_(unfinished)))
                .order_by(Attestation.day)
            )
        ).all()
        return {"items": [await views.root_view(session, a) for a in waiting]}


@router.get("/chain/portfolios/{code}", response_model=ChainStatus)
async def portfolio_status(code: str, principal: MaybeCaller, ctx: Ctx) -> dict[str, Any]:
    """ "Verified through <day>": how much of the portfolio's chain anchored roots cover."""
    async with ctx.db.reader() as session:
        portfolio = await portfolio_service.get_by_code(session, principal, code)
        return {"portfolio": portfolio.code, **await views.status(session, portfolio.id)}


@router.get("/chain/portfolios/{code}/events", response_model=ChainEvents)
async def events(
    code: str,
    principal: MaybeCaller,
    ctx: Ctx,
    after_seq: Annotated[int, Query(ge=0, le=2**62)] = 0,
    limit: Annotated[int, Query(ge=1, le=1000)] = 500,
) -> dict[str, Any]:
    """The published chain, oldest first: each event's canonical JSON and hash."""
    async with ctx.db.reader() as session:
        portfolio = await portfolio_service.get_by_code(session, principal, code)
        items = await views.entries(session, portfolio.id, after_seq, limit)
        return {"portfolio": portfolio.code, "items": items}


@router.get("/chain/portfolios/{code}/events/{seq}/proof", response_model=InclusionProof)
async def event_proof(code: str, seq: Seq, principal: MaybeCaller, ctx: Ctx) -> dict[str, Any]:
    """The Merkle inclusion proof of one event of the chain."""
    async with ctx.db.reader() as session:
        portfolio = await portfolio_service.get_by_code(session, principal, code)
        entry = await views.entry_by_seq(session, portfolio.id, seq)
        head = await session.get(ChainHead, portfolio.id)
        every = ctx.settings.attestation_root_every_s
        found = await views.proof(session, entry, every, head.seq if head else entry.seq)
        return {"portfolio": portfolio.code, **found}


@router.get("/chain/portfolios/{code}/fills/{fill_id}/proof", response_model=InclusionProof)
async def fill_proof(code: str, fill_id: Id, principal: MaybeCaller, ctx: Ctx) -> dict[str, Any]:
    """The Merkle inclusion proof of one fill of the portfolio."""
    async with ctx.db.reader() as session:
        portfolio = await portfolio_service.get_by_code(session, principal, code)
        entry = await views.entry_by_fill(session, portfolio.id, fill_id)
        head = await session.get(ChainHead, portfolio.id)
        every = ctx.settings.attestation_root_every_s
        found = await views.proof(session, entry, every, head.seq if head else entry.seq)
        return {"portfolio": portfolio.code, **found}
