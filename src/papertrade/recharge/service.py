"""Recharge orders (B6): a shared receiving address and a unique amount per pending order.

`pay_amount` = requested amount + k × 0.01 USDT with the smallest k in 0..99 that no other
pending order on that address pays; the `pending_key` unique index makes that hold even for two
orders created at the same instant. A transfer credits the order whose address, exact amount and
time window it matches (docs/wallet.md).
"""

from collections.abc import Sequence
from decimal import Decimal

from sqlalchemy import func, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from papertrade.errors import BadRequest, Conflict, NotFound
from papertrade.models import RechargeOrder, TronTransfer
from papertrade.trading.enums import LedgerKind
from papertrade.uow import AsyncWork
from papertrade.wallet import service as wallets
from papertrade.wallet.events import WalletCredited

STEP = Decimal("0.01")
SLOTS = 100
MICRO = Decimal(1_000_000)
PENDING, PAID, EXPIRED, CANCELLED, PAID_LATE = (
    "pending",
    "paid",
    "expired",
    "cancelled",
    "paid_late",
)
# Transfers: not yet judged, credited an order, matched nothing, credited by an operator.
SEEN, CREDITED, UNMATCHED, RESOLVED = "seen", "credited", "unmatched", "resolved"


def not_found() -> NotFound:
    return NotFound("Recharge order not found.", code="recharge_not_found")


async def expire_overdue(uow: AsyncWork) -> None:
    """Pending orders past their expiry become expired and free their amount. A transfer sent in
    time still credits an expired order (it is matched by its block time, not by status)."""
    await uow.session.execute(
        update(RechargeOrder)
        .where(RechargeOrder.status == PENDING, RechargeOrder.expires_at < uow.now())
        .values(status=EXPIRED, pending_key=None)
    )


async def create(
    uow: AsyncWork,
    user_id: int,
    amount: Decimal,
    *,
    addresses: Sequence[str],
    expiry_ms: int,
    max_pending: int | None = None,
) -> RechargeOrder:
    """A pending order with the first free pay amount on the first address that has one; at
    most `max_pending` pending orders per user (None: no cap)."""
    if not addresses:
        raise Conflict(
            "USDT recharge is not configured on this server.", code="recharge_unavailable"
        )
    await expire_overdue(uow)
    if max_pending is not None:
        # The user's wallet row serialises the user's own orders (after the expiry above, so
        # the lock order is the watcher's: orders, then wallet): racing requests see each
        # other's pending orders and the cap holds.
        await wallets.locked(uow, user_id)
        pending = await uow.session.scalar(
            select(func.count())
            .select_from(RechargeOrder)
            .where(RechargeOrder.user_id == user_id, RechargeOrder.status == PENDING)
        )
        if (pending or 0) >= max_pending:
            raise Conflict(
                f"You have {pending} recharge orders waiting for a payment, the most at once; "
                "pay or cancel one (POST /v1/recharge/orders/{id}/cancel), or wait for one to "
                "expire.",
                code="recharge_pending_limit",
            )
    now = uow.now()
    top = amount + STEP * (SLOTS - 1)
    for address in addresses:
        taken = set(
            await uow.session.scalars(
                select(RechargeOrder.pay_amount).where(
                    RechargeOrder.address == address,
                    RechargeOrder.status == PENDING,
                    RechargeOrder.pay_amount.between(amount, top),
                )
            )
        )
        for k in range(SLOTS):
            pay_amount = amount + STEP * k
            if pay_amount in taken:
                continue
            recharge = RechargeOrder(
                user_id=user_id,
                amount=amount,
                pay_amount=pay_amount,
                address=address,
                status=PENDING,
                pending_key=f"{address}:{pay_amount}",
                created_at=now,
                expires_at=now + expiry_ms,
            )
            try:
                async with uow.session.begin_nested():  # taken a moment ago by someone else?
                    uow.session.add(recharge)
            except IntegrityError:
                continue
            return recharge
    raise Conflict(
        "Every pay amount near this one is in use; try again in a few minutes or pick "
        "another amount.",
        code="try_again_later",
    )


async def list_mine(
    session: AsyncSession, user_id: int, *, before_id: int | None, limit: int
) -> Sequence[RechargeOrder]:
    statement = select(RechargeOrder).where(RechargeOrder.user_id == user_id)
    if before_id is not None:
        statement = statement.where(RechargeOrder.id < before_id)
    return (await session.scalars(statement.order_by(RechargeOrder.id.desc()).limit(limit))).all()


async def get_mine(
    session: AsyncSession, user_id: int, order_id: int, *, for_update: bool = False
) -> RechargeOrder:
    statement = select(RechargeOrder).where(RechargeOrder.id == order_id)
    if for_update:
        statement = statement.with_for_update()
    recharge = await session.scalar(statement)
    if recharge is None or recharge.user_id != user_id:
        raise not_found()
    return recharge


async def cancel(uow: AsyncWork, user_id: int, order_id: int) -> RechargeOrder:
    """Stop waiting for a payment; a transfer that still arrives is kept for review."""
    recharge = await get_mine(uow.session, user_id, order_id, for_update=True)
    status = shown_status(recharge, uow.now())
    if status != PENDING:
        raise Conflict(
            f"Only a pending order can be cancelled; this one is {status}.",
            code="recharge_not_pending",
        )
    recharge.status = CANCELLED
    recharge.pending_key = None
    return recharge


def shown_status(recharge: RechargeOrder, now: int) -> str:
    """The status a user sees: a pending order past its expiry is expired (the row catches up
    the next time orders are created or the watcher runs)."""
    return EXPIRED if recharge.status == PENDING and recharge.expires_at < now else recharge.status


async def judge(uow: AsyncWork, transfer_id: int, *, confirmed_before: int) -> str:
    """Credit the order a seen transfer pays, or keep it as unmatched; returns its status.

    Runs in its own unit of work with the transfer row locked, and only while it is still
    `seen`: a second watcher, or a rerun after a crash, finds it judged and does nothing."""
    transfer = await uow.session.scalar(
        select(TronTransfer).where(TronTransfer.id == transfer_id).with_for_update()
    )
    if transfer is None or transfer.status != SEEN:
        return transfer.status if transfer else "missing"
    if transfer.block_timestamp > confirmed_before:
        return SEEN  # not enough confirmations yet; judged on a later run
    paid = Decimal(transfer.value) / MICRO
    recharge = await uow.session.scalar(
        select(RechargeOrder)
        .where(
            RechargeOrder.address == transfer.to_address,
            RechargeOrder.pay_amount == paid,
            RechargeOrder.status.in_((PENDING, EXPIRED)),
            RechargeOrder.created_at <= transfer.block_timestamp,
            RechargeOrder.expires_at >= transfer.block_timestamp,
        )
        .order_by(RechargeOrder.id)
        .limit(1)
        .with_for_update()
    )
    if recharge is None:
        transfer.status = UNMATCHED
        transfer.note = "no pending order pays this exact amount at this address and time"
        return UNMATCHED
    recharge.status = PAID
    recharge.paid_at = uow.now()
    recharge.tx_id = transfer.tx_id
    recharge.pending_key = None
    transfer.status = CREDITED
    transfer.order_id = recharge.id
    reference = f"tron:{transfer.tx_id}"
    wallet = await wallets.credit(
        uow,
        recharge.user_id,
        LedgerKind.RECHARGE,
        recharge.pay_amount,
        actor="watcher",
        reference=reference,
        note=f"recharge recharge {recharge.id}",
    )
    uow.emit(
        WalletCredited(
            user_id=recharge.user_id,
            kind=LedgerKind.RECHARGE.value,
            amount=recharge.pay_amount,
            balance=wallet.balance,
            reference=reference,
        )
    )
    return CREDITED


async def unmatched(session: AsyncSession) -> Sequence[TronTransfer]:
    rows = await session.scalars(
        select(TronTransfer).where(TronTransfer.status == UNMATCHED).order_by(TronTransfer.id)
    )
    return rows.all()


async def resolve(
    uow: AsyncWork,
    transfer_id: int,
    *,
    operator: str,
    user_id: int | None = None,
    order_id: int | None = None,
    note: str = "",
) -> TronTransfer:
    """An operator credits an unmatched transfer: to an order (which becomes paid_late) or to a
    user's wallet. The ledger row names the operator."""
    transfer = await uow.session.scalar(
        select(TronTransfer).where(TronTransfer.id == transfer_id).with_for_update()
    )
    if transfer is None or transfer.status != UNMATCHED:
        raise Conflict("Only an unmatched transfer can be resolved.", code="transfer_not_unmatched")
    amount = Decimal(transfer.value) / MICRO
    if order_id is not None:
        recharge = await uow.session.get(RechargeOrder, order_id, with_for_update=True)
        if recharge is None or recharge.status not in (EXPIRED, CANCELLED, PENDING):
            raise Conflict("That order cannot be marked paid late.", code="recharge_not_late")
        recharge.status = PAID_LATE
        recharge.paid_at = uow.now()
        recharge.tx_id = transfer.tx_id
        recharge.pending_key = None
        transfer.order_id = recharge.id
        user_id = recharge.user_id
    if user_id is None:
        raise BadRequest("Name the user or the order to credit.")
    transfer.status = RESOLVED
    transfer.resolved_by = operator
    transfer.note = note[:200]
    reference = f"tron:{transfer.tx_id}"
    wallet = await wallets.credit(
        uow,
        user_id,
        LedgerKind.OPERATOR_CREDIT,
        amount,
        actor=f"operator:{operator}",
        reference=reference,
        note=note or "resolved by an operator",
    )
    uow.emit(
        WalletCredited(
            user_id=user_id,
            kind=LedgerKind.OPERATOR_CREDIT.value,
            amount=amount,
            balance=wallet.balance,
            reference=reference,
        )
    )
    return transfer
