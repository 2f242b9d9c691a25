"""Reconciliation: on a schedule (and on demand), each active live account's positions and
open orders at the exchange are compared with what the mirror intended, and the result is kept.

Intended positions are the sum of the orders the mirror sent since the account's baseline (its
creation, or the last time the kill switch closed every position). The mirror only sends market
orders, so no open order is intended: any resting order at the exchange is drift too (placed by
hand on the sub-account, or left by a stopped strategy elsewhere). A drift unlike the previous
result raises the durable `live.drift` event: the owner's inbox hears of it once, not on every
run. Exchange calls happen outside transactions."""

import asyncio
import json
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from sqlalchemy import select

from papertrade.context import AppContext
from papertrade.events import DomainEvent
from papertrade.kit.decimals import plain
from papertrade.kit.time import now_ms
from papertrade.live import clients, exchange
from papertrade.models import LiveAccount, LiveOrder, LiveReconciliation

BATCH = 500  # accounts per run (by id): far more than one user or a small service has
SETTLE_TRIES = 4  # a check waits this many times (at most ~1.5 s) for the mirror to be still
SETTLE_PAUSE_S = 0.5
# a row still queued after this lost its send job (`live.resend_stale` sends it): no longer
# "on its way", so it does not hold up a reconciliation
STALE_AFTER_MS = 120_000  # well past the send job's own retries (2 + 4 + 6 s)
UNSETTLED = "orders were being mirrored throughout the check; the next run checks again"


@dataclass(frozen=True, slots=True, kw_only=True)
class LiveDrift(DomainEvent):
    """The exchange holds something other than what the mirror intended."""

    type = "live.drift"
    durable = True
    user_id: int
    live_account_id: int
    label: str
    drift: Mapping[str, Any]

    @property
    def data(self) -> Mapping[str, Any]:
        return {
            "user_id": self.user_id,
            "live_account_id": self.live_account_id,
            "label": self.label,
            "drift": self.drift,
        }


@dataclass(frozen=True, slots=True)
class MirrorState:
    """What the mirror meant at one moment: the positions its sent orders add up to, and
    whether an order is on its way to the exchange (queued and not yet stale)."""

    intended: dict[str, Decimal]
    sending: bool


async def mirror_state(ctx: AppContext, account_id: int, since: int) -> MirrorState:
    async with ctx.db.reader() as session:
        rows = await session.execute(
            select(
                LiveOrder.symbol,
                LiveOrder.side,
                LiveOrder.quantity,
                LiveOrder.status,
                LiveOrder.updated_at,
            ).where(
                LiveOrder.live_account_id == account_id,
                LiveOrder.status.in_(("sent", "queued")),
                LiveOrder.created_at >= since,
            )
        )
        held: dict[str, Decimal] = {}
        sending = False
        horizon = now_ms() - STALE_AFTER_MS
        for symbol, side, quantity, status, updated_at in rows:
            if status == "queued":
                sending = sending or updated_at >= horizon
                continue
            signed = (quantity or Decimal(0)) * (1 if side == "buy" else -1)
            held[symbol] = held.get(symbol, Decimal(0)) + signed
    return MirrorState({s: q for s, q in held.items() if q != 0}, sending)


def compare(
    intended: dict[str, Decimal], actual: dict[str, Decimal], open_orders: list[dict[str, Any]]
) -> dict[str, Any]:
    """What differs: positions by symbol, and every open order (none is intended)."""
    positions = [
        {
            "symbol": symbol,
            "intended": plain(intended.get(symbol, Decimal(0))),
            "actual": plain(actual.get(symbol, Decimal(0))),
        }
        for symbol in sorted(set(intended) | set(actual))
        if intended.get(symbol, Decimal(0)) != actual.get(symbol, Decimal(0))
    ]
    orders = [
        {
            "symbol": str(o.get("symbol")),
            "client_order_id": str(o.get("clientOrderId", "")),
            "side": str(o.get("side", "")).lower(),
            "quantity": str(o.get("origQty", "")),
            "price": str(o.get("price", "")),
        }
        for o in sorted(open_orders, key=lambda o: (str(o.get("symbol")), str(o.get("orderId"))))
    ]
    if not positions and not orders:
        return {}
    return {"positions": positions, "open_orders": orders}


async def reconcile_account(ctx: AppContext, account_id: int) -> LiveReconciliation | None:
    async with ctx.db.reader() as session:
        account = await session.get(LiveAccount, account_id)
        if account is None:
            return None
        key, secret = account.api_key, ctx.cipher.decrypt(account.api_secret_encrypted)
        since, user_id, label = account.baseline_at, account.user_id, account.label
    client = clients.client(ctx, key, secret)
    status, error = "error", UNSETTLED
    drift: dict[str, Any] = {}
    retried = False
    for attempt in range(SETTLE_TRIES):
        if attempt:
            await asyncio.sleep(SETTLE_PAUSE_S)
        # The exchange is compared with what the mirror meant only when nothing was on its
        # way there across the exchange's answer: an order sent in between would otherwise
        # look like drift ("0.1 held, 0 intended") and alarm the owner for nothing.
        before = await mirror_state(ctx, account_id, since)
        if before.sending:
            continue
        try:
            actual = await exchange.positions(client)
            open_orders = await exchange.open_orders(client)
        except exchange.ExchangeError as exc:
            status, drift, error = "error", {}, f"{type(exc).__name__}: {exchange.said(exc)}"[:300]
            if exchange.transient(exc) and not retried and attempt + 1 < SETTLE_TRIES:
                # These are reads: one slow or lost answer is tried once more after the pause,
                # not reported to the owner as "could not check".
                retried = True
                continue
            break
        if await mirror_state(ctx, account_id, since) != before:
            continue
        drift = compare(before.intended, actual, open_orders)
        status, error = ("drift" if drift else "ok"), ""
        break
    return await _keep(ctx, account_id, user_id, label, status, drift, error)


async def _keep(
    ctx: AppContext,
    account_id: int,
    user_id: int,
    label: str,
    status: str,
    drift: dict[str, Any],
    error: str,
) -> LiveReconciliation:
    text = json.dumps(drift, sort_keys=True, separators=(",", ":"))
    async with ctx.transaction() as uow:
        # The previous result is read under the account's lock: two checks at once (the
        # scheduled one and a manual one) would otherwise both see "no drift before" and tell
        # the owner twice. A check that could not compare (an error) is not a result: the
        # same drift on both sides of it is not told again.
        await uow.session.execute(
            select(LiveAccount.id).where(LiveAccount.id == account_id).with_for_update()
        )
        previous = await uow.session.scalar(
            select(LiveReconciliation.drift)
            .where(
                LiveReconciliation.live_account_id == account_id,
                LiveReconciliation.status != "error",
            )
            .order_by(LiveReconciliation.id.desc())
            .limit(1)
        )
        record = LiveReconciliation(
            live_account_id=account_id, checked_at=now_ms(), status=status, drift=text, error=error
        )
        uow.session.add(record)
        if status == "drift" and text != (previous or "{}"):
            uow.emit(
                LiveDrift(user_id=user_id, live_account_id=account_id, label=label, drift=drift)
            )
    return record


async def reconcile_all(ctx: AppContext) -> dict[str, int]:
    async with ctx.db.reader() as session:
        ids = (
            await session.scalars(
                select(LiveAccount.id)
                .where(LiveAccount.status == "active")
                .order_by(LiveAccount.id)
                .limit(BATCH)
            )
        ).all()
    counts: dict[str, int] = {}
    for account_id in ids:
        record = await reconcile_account(ctx, account_id)
        if record is not None:
            counts[record.status] = counts.get(record.status, 0) + 1
    return counts


def view(record: LiveReconciliation) -> dict[str, Any]:
    return {
        "id": record.id,
        "live_account_id": record.live_account_id,
        "checked_at": record.checked_at,
        "status": record.status,
        "drift": json.loads(record.drift),
        "error": record.error,
    }
