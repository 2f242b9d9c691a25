"""The watcher: fetch USDT transfers to our addresses, keep each once, then judge each.

Two steps, each its own commit: a transfer is first stored as `seen` (unique tx_id), then
judged in a unit of work of its own that credits and marks it together. A crash between the two
leaves it `seen`, and the next run judges it: nothing is lost and nothing credits twice.
"""

import contextlib
from dataclasses import dataclass

import httpx
from sqlalchemy import func, or_, select
from sqlalchemy.exc import IntegrityError

from papertrade.context import AppContext
from papertrade.kit import tls
from papertrade.models import RechargeOrder, TronTransfer
from papertrade.recharge import service, trongrid

BLOCK_MS = 3_000  # TRON makes a block about every 3 seconds
LOOKBACK_MS = 60_000  # B6: from the oldest open order's creation minus a minute
LATE_GRACE_MS = 3_600_000  # keep looking this long past an order's expiry (slow confirmations)


@dataclass(slots=True)
class WatchResult:
    fetched: int = 0
    stored: int = 0
    credited: int = 0
    unmatched: int = 0


async def watch_once(ctx: AppContext, client: httpx.AsyncClient | None = None) -> WatchResult:
    settings = ctx.settings
    result = WatchResult()
    if not settings.recharge_addresses:
        return result
    async with ctx.transaction() as uow:
        await service.expire_overdue(uow)
        now = uow.now()
        oldest = await uow.session.scalar(
            select(func.min(RechargeOrder.created_at)).where(
                or_(
                    RechargeOrder.status == service.PENDING,
                    (RechargeOrder.status == service.EXPIRED)
                    & (RechargeOrder.expires_at >= now - LATE_GRACE_MS),
                )
            )
        )
    if oldest is not None:
        # a client the caller passes is used, not closed
        borrowed = contextlib.nullcontext(client) if client is not None else None
        async with borrowed or httpx.AsyncClient(verify=tls.client_context()) as http:
            for address in settings.recharge_addresses:
                async for transfer in trongrid.incoming(
                    http,
                    settings.trongrid_url,
                    address,
                    since_ms=oldest - LOOKBACK_MS,
                    api_key=settings.trongrid_api_key,
                ):
                    result.fetched += 1
                    result.stored += await _store(ctx, transfer)
    await _judge_seen(ctx, result)
    return result


async def _store(ctx: AppContext, transfer: trongrid.Transfer) -> int:
    """Keep a transfer once (1 when it is new here)."""
    try:
        async with ctx.transaction() as uow:
            known = await uow.session.scalar(
                select(TronTransfer.id).where(TronTransfer.tx_id == transfer.tx_id)
            )
            if known is not None:
                return 0
            uow.session.add(
                TronTransfer(
                    tx_id=transfer.tx_id,
                    from_address=transfer.from_address,
                    to_address=transfer.to_address,
                    value=transfer.value,
                    block_timestamp=transfer.block_timestamp,
                    status=service.SEEN,
                    seen_at=uow.now(),
                )
            )
    except IntegrityError:  # another watcher stored it between our look and our insert
        return 0
    return 1


async def _judge_seen(ctx: AppContext, result: WatchResult) -> None:
    async with ctx.db.reader() as session:
        waiting = list(
            await session.scalars(
                select(TronTransfer.id)
                .where(TronTransfer.status == service.SEEN)
                .order_by(TronTransfer.id)
            )
        )
    for transfer_id in waiting:
        async with ctx.transaction() as uow:
            confirmed_before = uow.now() - ctx.settings.recharge_confirmations * BLOCK_MS
            status = await service.judge(uow, transfer_id, confirmed_before=confirmed_before)
        result.credited += status == service.CREDITED
        result.unmatched += status == service.UNMATCHED
