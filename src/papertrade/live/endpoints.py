"""/v1/live: live accounts (docs/live.md). The owner only; secrets go in, never out."""

from typing import Annotated, Any

from fastapi import APIRouter, Query
from sqlalchemy import func, select

from papertrade.auth.v1 import Caller, Ctx, Writer
from papertrade.errors import NotFound
from papertrade.kit.ids import Id
from papertrade.live import reconcile, service
from papertrade.live.kill import kill
from papertrade.live.schemas import (
    KeyRotation,
    KillReport,
    KillRequest,
    LiveAccountCreate,
    LiveAccountRead,
    LiveAccountUpdate,
    LiveOrderRead,
    ReconciliationRead,
)
from papertrade.models import LiveAccount, LiveOrder, LiveReconciliation

router = APIRouter(tags=["live"])


@router.post("/live/accounts", status_code=201, response_model=LiveAccountRead)
async def register(body: LiveAccountCreate, principal: Writer, ctx: Ctx) -> dict[str, Any]:
    """Register a sub-account key: checked at the exchange first (works, trades futures, no
    withdrawal rights where the exchange reports them); the secret is kept encrypted."""
    async with ctx.db.reader() as session:  # refuse a wrong source before calling the exchange
        await service.check_source(session, principal, body)
    checked = await service.check_key(body.api_key, body.api_secret, ctx.settings.live_exchange_url)
    async with ctx.transaction() as uow:
        account = await service.create(uow, principal, body, ctx.cipher, checked)
        return service.view(account)


@router.get("/live/accounts", response_model=list[LiveAccountRead])
async def accounts(principal: Caller, ctx: Ctx) -> list[dict[str, Any]]:
    async with ctx.db.reader() as session:
        return [service.view(a) for a in await service.list_mine(session, principal.user_id)]


@router.get("/live/accounts/{account_id}", response_model=LiveAccountRead)
async def account(account_id: Id, principal: Caller, ctx: Ctx) -> dict[str, Any]:
    async with ctx.db.reader() as session:
        return service.view(await service.get_owned(session, principal, account_id))


@router.patch("/live/accounts/{account_id}", response_model=LiveAccountRead)
async def change(
    account_id: Id, body: LiveAccountUpdate, principal: Writer, ctx: Ctx
) -> dict[str, Any]:
    """Bind or unbind the signal source, sizing, symbols, limits; `resume` re-arms it."""
    async with ctx.transaction() as uow:
        found = await service.get_owned(uow.session, principal, account_id, for_update=True)
        await service.update(uow, principal, found, body)
        return service.view(found)


@router.post("/live/accounts/{account_id}/rotate", response_model=LiveAccountRead)
async def rotate(account_id: Id, body: KeyRotation, principal: Writer, ctx: Ctx) -> dict[str, Any]:
    """Replace the key and secret (the new key is checked as at registration)."""
    async with ctx.db.reader() as session:
        await service.get_owned(session, principal, account_id)
    checked = await service.check_key(body.api_key, body.api_secret, ctx.settings.live_exchange_url)
    async with ctx.transaction() as uow:
        found = await service.get_owned(uow.session, principal, account_id, for_update=True)
        ctx.exchanges.forget(found.api_key)
        found.api_key = body.api_key
        found.api_secret_encrypted = ctx.cipher.encrypt(body.api_secret)
        found.withdrawals = checked.withdrawals
        return service.view(found)


@router.delete("/live/accounts/{account_id}", status_code=204)
async def delete(account_id: Id, principal: Writer, ctx: Ctx) -> None:
    """Forget the account and its key (nothing is done at the exchange: use the kill switch)."""
    async with ctx.transaction() as uow:
        found = await service.get_owned(uow.session, principal, account_id, for_update=True)
        ctx.exchanges.forget(found.api_key)
        await uow.session.delete(found)


@router.get("/live/accounts/{account_id}/orders", response_model=list[LiveOrderRead])
async def orders(
    account_id: Id,
    principal: Caller,
    ctx: Ctx,
    limit: Annotated[int, Query(ge=1, le=500)] = 100,
) -> list[LiveOrder]:
    """Every mirrored order, newest first, with the exchange's last answer."""
    async with ctx.db.reader() as session:
        await service.get_owned(session, principal, account_id)
        rows = await session.scalars(
            select(LiveOrder)
            .where(LiveOrder.live_account_id == account_id)
            .order_by(LiveOrder.id.desc())
            .limit(limit)
        )
        return list(rows.all())


@router.post("/live/kill", response_model=list[KillReport])
async def kill_all(body: KillRequest, principal: Writer, ctx: Ctx) -> list[Any]:
    """The kill switch for every live account of the caller: stop mirroring, cancel every open
    order and, with `close_positions`, close every position at market. A report per account."""
    return list(
        await kill(
            ctx, principal.user_id, None, close_positions=body.close_positions, reason="kill switch"
        )
    )


@router.post("/live/accounts/{account_id}/kill", response_model=list[KillReport])
async def kill_one(account_id: Id, body: KillRequest, principal: Writer, ctx: Ctx) -> list[Any]:
    async with ctx.db.reader() as session:
        await service.get_owned(session, principal, account_id)
    return list(
        await kill(
            ctx,
            principal.user_id,
            [account_id],
            close_positions=body.close_positions,
            reason="kill switch",
        )
    )


@router.get("/live/accounts/{account_id}/reconciliations", response_model=list[ReconciliationRead])
async def reconciliations(
    account_id: Id,
    principal: Caller,
    ctx: Ctx,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
) -> list[dict[str, Any]]:
    """The account's reconciliation results, newest first: ok, drift (what differs) or error."""
    async with ctx.db.reader() as session:
        await service.get_owned(session, principal, account_id)
        rows = await session.scalars(
            select(LiveReconciliation)
            .where(LiveReconciliation.live_account_id == account_id)
            .order_by(LiveReconciliation.id.desc())
            .limit(limit)
        )
        return [reconcile.view(r) for r in rows.all()]


@router.post("/live/accounts/{account_id}/reconcile", response_model=ReconciliationRead)
async def reconcile_now(account_id: Id, principal: Writer, ctx: Ctx) -> dict[str, Any]:
    """Compare the exchange with the intended positions now (the job does it on a schedule)."""
    async with ctx.db.reader() as session:
        await service.get_owned(session, principal, account_id)
    record = await reconcile.reconcile_account(ctx, account_id)
    if record is None:  # deleted meanwhile
        raise NotFound("Live account not found.", code="live_account_not_found")
    return reconcile.view(record)


@router.get("/live/drift", response_model=list[ReconciliationRead])
async def drift(principal: Caller, ctx: Ctx) -> list[dict[str, Any]]:
    """Each of your accounts' latest reconciliation where it found drift or could not check."""
    async with ctx.db.reader() as session:
        latest = (
            select(LiveReconciliation.live_account_id, func.max(LiveReconciliation.id).label("id"))
            .join(LiveAccount, LiveAccount.id == LiveReconciliation.live_account_id)
            .where(LiveAccount.user_id == principal.user_id)
            .group_by(LiveReconciliation.live_account_id)
            .subquery()
        )
        rows = await session.scalars(
            select(LiveReconciliation)
            .join(latest, latest.c.id == LiveReconciliation.id)
            .where(LiveReconciliation.status != "ok")
            .order_by(LiveReconciliation.live_account_id)
        )
        return [reconcile.view(r) for r in rows.all()]
