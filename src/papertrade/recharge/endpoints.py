"""/v1/recharge: USDT-TRC20 recharge orders (create, list, get, cancel)."""

import io
from typing import Annotated

import segno
from fastapi import APIRouter, Query
from fastapi.responses import Response

from papertrade.auth.v1 import Caller, Ctx, Writer
from papertrade.kit.ids import Id
from papertrade.kit.time import now_ms
from papertrade.models import RechargeOrder
from papertrade.recharge import service
from papertrade.recharge.schemas import RechargeCreate, RechargeRead

router = APIRouter(tags=["recharge"])
Limit = Annotated[int, Query(ge=1, le=200)]


def _read(order: RechargeOrder) -> RechargeRead:
    read = RechargeRead.model_validate(order)
    return read.model_copy(update={"status": service.shown_status(order, now_ms())})


@router.post("/recharge/orders", status_code=201, response_model=RechargeRead)
async def create_order(body: RechargeCreate, principal: Writer, ctx: Ctx) -> RechargeRead:
    """A recharge order: send exactly `pay_amount` USDT on TRON to `address` before
    `expires_at`; the wallet is credited once the transfer is confirmed."""
    async with ctx.transaction() as uow:
        order = await service.create(
            uow,
            principal.user_id,
            body.amount,
            addresses=ctx.settings.recharge_addresses,
            expiry_ms=ctx.settings.recharge_expiry_s * 1000,
            max_pending=ctx.settings.recharge_max_pending,
        )
        return _read(order)


@router.get("/recharge/orders", response_model=list[RechargeRead])
async def list_orders(
    principal: Caller, ctx: Ctx, before_id: Id | None = None, limit: Limit = 50
) -> list[RechargeRead]:
    """The caller's recharge orders, newest first (page with before_id)."""
    async with ctx.db.reader() as session:
        rows = await service.list_mine(session, principal.user_id, before_id=before_id, limit=limit)
        return [_read(row) for row in rows]


@router.get("/recharge/orders/{order_id}", response_model=RechargeRead)
async def get_order(order_id: Id, principal: Caller, ctx: Ctx) -> RechargeRead:
    """One of the caller's recharge orders (poll it to see it paid)."""
    async with ctx.db.reader() as session:
        return _read(await service.get_mine(session, principal.user_id, order_id))


@router.get("/recharge/orders/{order_id}/qr.svg", response_class=Response)
async def order_qr(order_id: Id, principal: Caller, ctx: Ctx) -> Response:
    """A QR code of the order's receiving address (SVG), for a phone wallet to scan. The exact
    amount is typed by hand: wallets read amounts in a TRON URI inconsistently."""
    async with ctx.db.reader() as session:
        recharge = await service.get_mine(session, principal.user_id, order_id)
    out = io.BytesIO()
    segno.make(recharge.address, error="m").save(out, kind="svg", scale=6, border=2, xmldecl=False)
    return Response(
        out.getvalue(), media_type="image/svg+xml", headers={"Cache-Control": "private"}
    )


@router.post("/recharge/orders/{order_id}/cancel", response_model=RechargeRead)
async def cancel_order(order_id: Id, principal: Writer, ctx: Ctx) -> RechargeRead:
    """Stop waiting for the payment of a pending order."""
    async with ctx.transaction() as uow:
        return _read(await service.cancel(uow, principal.user_id, order_id))
