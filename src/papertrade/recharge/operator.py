"""What `papertrade recharge …` does: list transfers that matched no order, and resolve one."""

from decimal import Decimal

from sqlalchemy import func, select

from papertrade.config import Settings
from papertrade.context import AppContext
from papertrade.errors import PapertradeError
from papertrade.models import User
from papertrade.recharge import service


async def unmatched(settings: Settings) -> str:
    """A table of the unmatched transfers, oldest first."""
    ctx = AppContext.build(settings)
    try:
        async with ctx.db.reader() as session:
            rows = await service.unmatched(session)
    finally:
        await ctx.close()
    if not rows:
        return "no unmatched transfers"
    lines = [f"{'id':>6}  {'amount':>16}  {'block time (ms)':>15}  {'from':<34}  tx id"]
    for row in rows:
        amount = Decimal(row.value) / service.MICRO
        lines.append(
            f"{row.id:>6}  {amount:>16.6f}  {row.block_timestamp:>15}  {row.from_address:<34}  "
            f"{row.tx_id}"
        )
    return "\n".join(lines)


async def resolve(
    settings: Settings,
    transfer_id: int,
    *,
    by: str,
    order_id: int | None,
    user: str | None,
    note: str,
) -> str:
    """Credit an unmatched transfer to an order (paid_late) or a user (id or email)."""
    ctx = AppContext.build(settings)
    try:
        async with ctx.transaction() as uow:
            user_id = None
            if user is not None:
                user_id = await uow.session.scalar(
                    select(User.id).where(
                        User.id == int(user) if user.isdigit() else User.email == func.lower(user)
                    )
                )
                if user_id is None:
                    return f"no such user: {user}"
            transfer = await service.resolve(
                uow, transfer_id, operator=by, user_id=user_id, order_id=order_id, note=note
            )
            amount = Decimal(transfer.value) / service.MICRO
        return f"transfer {transfer_id}: {amount:.6f} USDT credited, resolved by {by}"
    except PapertradeError as exc:
        return f"refused: {exc.message}"
    finally:
        await ctx.close()
