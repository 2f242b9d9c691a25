"""Sending one mirrored order to the exchange: the queued job `live.send_order`.

Idempotent: an order that may have reached the exchange (an earlier attempt timed out or the
connection dropped) is looked up by its client order id before anything is sent again, so a
retry never doubles it. Every attempt's answer is kept on the row. Limits are checked against
the exchange's own numbers: the max daily loss (equity against the UTC day's first equity)
trips the kill switch; so do repeated exchange errors.
"""

import json
from collections.abc import Sequence
from decimal import ROUND_DOWN, Decimal
from typing import Any

from sqlalchemy import select

from papertrade.chain.proofs import utc_day
from papertrade.context import AppContext
from papertrade.events import DomainEvent, Subscriber
from papertrade.jobs.declare import queued, scheduled
from papertrade.jobs.run import JobRun
from papertrade.jobs.runtime import Jobs
from papertrade.kit.time import now_ms
from papertrade.live import clients, exchange
from papertrade.live.events import LiveOrderQueued
from papertrade.live.kill import kill
from papertrade.live.reconcile import STALE_AFTER_MS, reconcile_all
from papertrade.models import LiveAccount, LiveOrder, Order, Portfolio


class StillUnsure(Exception):
    """The exchange did not answer and does not know the order (yet): try again later."""


async def send_order(run: JobRun, live_order_id: int) -> str:
    ctx = run.ctx
    async with ctx.transaction() as uow:
        row = await uow.session.get(LiveOrder, live_order_id, with_for_update=True)
        if row is None or row.status != "queued":
            return "nothing to send"
        account = await uow.session.get(LiveAccount, row.live_account_id)
        assert account is not None
        if account.status != "active":
            row.status, row.answer = "skipped", "the account is stopped"
            return row.status
        row.attempts += 1
        attempt = row.attempts
        # ratio sizing compares with the paper portfolio the source order traded in
        source_order = await uow.session.get(Order, row.source_order_id)
        paper = source_order.portfolio_id if source_order else account.source_portfolio_id
        source = await uow.session.get(Portfolio, paper or 0)
        source_equity = source.balance if source is not None else None
        secret = ctx.cipher.decrypt(account.api_secret_encrypted)
        snapshot = (
            account.id,
            account.user_id,
            account.api_key,
            account.sizing,
            account.sizing_value,
        )
        limits = (
            account.max_position_notional,
            account.max_daily_loss,
            account.day,
            account.day_start_equity,
        )
        order = (row.symbol, row.side, row.source_quantity, row.source_price, row.client_order_id)
        reduce_only = row.reduce_only
    account_id, user_id, api_key, sizing, sizing_value = snapshot
    max_notional, max_loss, day, day_start = limits
    symbol, side, source_qty, price, client_id = order
    client = clients.client(ctx, api_key, secret)
    if attempt > 1:
        found = await _lookup(client, symbol, client_id)
        if found is not None:
            return await _record(ctx, live_order_id, "sent", found, quantity=None)
    equity = await _equity(ctx, client, live_order_id, account_id, user_id)
    if isinstance(equity, str):  # the exchange refused: recorded
        return equity
    today = utc_day(now_ms())
    if day != today:
        await _start_day(ctx, account_id, today, equity)
    elif max_loss is not None and day_start is not None and day_start - equity >= max_loss:
        await _record(ctx, live_order_id, "skipped", {"reason": "max daily loss reached"}, None)
        await kill(
            ctx, user_id, [account_id], close_positions=False, reason="max daily loss reached"
        )
        return "skipped"
    quantity = _size(ctx, symbol, sizing, sizing_value, source_qty, price, equity, source_equity)
    if quantity <= 0:
        return await _record(ctx, live_order_id, "skipped", {"reason": "below the step size"}, None)
    if max_notional is not None:
        held = await exchange.position_amount(client, symbol)
        after = held + (quantity if side == "buy" else -quantity)
        if abs(after) > abs(held) and abs(after) * price > max_notional:
            reason = {"reason": f"the position would pass {max_notional} USDT"}
            return await _record(ctx, live_order_id, "skipped", reason, quantity)
    try:
        answer = await exchange.place_market(
            client, symbol, side, quantity, client_id, reduce_only=reduce_only
        )
    except exchange.ExchangeError as exc:
        # Taken client order id: an overlapping attempt (a late job, the sweep) placed it.
        if not exchange.uncertain(exc) and not exchange.duplicate(exc):
            return await _failed(ctx, live_order_id, account_id, user_id, exc, quantity)
        found = await _lookup(client, symbol, client_id)
        if found is None:
            await _record(ctx, live_order_id, "queued", {"error": repr(exc)}, quantity)
            raise StillUnsure(str(exc)) from exc  # the job's retry looks it up again
        answer = found
    await _errors(ctx, account_id, reset=True)
    return await _record(ctx, live_order_id, "sent", answer, quantity)


async def _equity(
    ctx: AppContext, client: Any, live_order_id: int, account_id: int, user_id: int
) -> Decimal | str:
    """The sub-account's equity, or the outcome when the exchange refused to say."""
    try:
        return await exchange.equity(client)
    except exchange.ExchangeError as exc:
        if exchange.uncertain(exc):  # nothing was sent: keep it queued for the retry
            await _record(ctx, live_order_id, "queued", {"error": repr(exc)}, None)
            raise StillUnsure(str(exc)) from exc
        return await _failed(ctx, live_order_id, account_id, user_id, exc)


async def _lookup(client: Any, symbol: str, client_id: str) -> dict[str, Any] | None:
    try:
        return await exchange.find_order(client, symbol, client_id)
    except exchange.ExchangeError as exc:
        if exchange.uncertain(exc):
            return None
        raise


def _size(
    ctx: AppContext,
    symbol: str,
    sizing: str,
    value: Decimal,
    source_qty: Decimal,
    price: Decimal,
    equity: Decimal,
    source_equity: Decimal | None,
) -> Decimal:
    """ratio: the paper quantity scaled by live equity ÷ paper wallet, times the ratio;
    fixed: `value` USDT of notional per mirrored fill. Rounded down to the symbol's step."""
    if sizing == "fixed":
        raw = value / price if price > 0 else Decimal(0)
    elif source_equity and source_equity > 0:
        raw = source_qty * equity / source_equity * value
    else:
        raw = Decimal(0)
    step = Decimal("0.001")
    market = ctx.market
    if market is not None and symbol in market.instruments():
        step = market.instruments()[symbol].step_size
    return (raw / step).to_integral_value(rounding=ROUND_DOWN) * step


async def _record(
    ctx: AppContext,
    live_order_id: int,
    status: str,
    answer: dict[str, Any],
    quantity: Decimal | None,
) -> str:
    async with ctx.transaction() as uow:
        row = await uow.session.get(LiveOrder, live_order_id, with_for_update=True)
        assert row is not None
        if row.status == "sent" and status != "sent":
            return "sent"  # an overlapping attempt got it there: that is the truth to keep
        row.status = status
        row.answer = json.dumps(answer, default=str)[:4000]
        if quantity is not None:
            row.quantity = quantity
        if status == "sent":
            row.exchange_order_id = str(answer.get("orderId", "")) or None
    return status


async def _start_day(ctx: AppContext, account_id: int, day: str, equity: Decimal) -> None:
    async with ctx.transaction() as uow:
        account = await uow.session.get(LiveAccount, account_id, with_for_update=True)
        if account is not None and account.day != day:
            account.day, account.day_start_equity = day, equity.quantize(Decimal("0.000001"))


async def _errors(ctx: AppContext, account_id: int, *, reset: bool) -> int:
    async with ctx.transaction() as uow:
        account = await uow.session.get(LiveAccount, account_id, with_for_update=True)
        if account is None:
            return 0
        account.consecutive_errors = 0 if reset else account.consecutive_errors + 1
        return account.consecutive_errors


async def _failed(
    ctx: AppContext,
    live_order_id: int,
    account_id: int,
    user_id: int,
    error: Exception,
    quantity: Decimal | None = None,
) -> str:
    """The exchange said no: recorded; enough of those in a row trip the kill switch."""
    await _record(
        ctx,
        live_order_id,
        "rejected",
        {"error": f"{type(error).__name__}: {exchange.said(error)}"},
        quantity,
    )
    if await _errors(ctx, account_id, reset=False) >= ctx.settings.live_max_consecutive_errors:
        await kill(
            ctx, user_id, [account_id], close_positions=False, reason="repeated exchange errors"
        )
    return "rejected"


async def resend_stale(run: JobRun) -> dict[str, int]:
    """Rows still `queued` long after they were queued lost their send job (a process died
    between the commit and the enqueue, or the job ran out of attempts): send them from here.
    Safe to overlap with a late job or another sweep: every attempt after the first looks the
    order up first, a client order id the exchange says is taken means the order is there, and
    a row recorded `sent` stays so."""
    horizon = now_ms() - STALE_AFTER_MS
    async with run.ctx.db.reader() as session:
        stale = (
            await session.scalars(
                select(LiveOrder.id)
                .where(LiveOrder.status == "queued", LiveOrder.updated_at < horizon)
                .order_by(LiveOrder.id)
                .limit(100)
            )
        ).all()
    outcomes: dict[str, int] = {}
    for live_order_id in stale:
        try:
            outcome = await send_order(run, live_order_id)
        except StillUnsure:
            outcome = "still unsure"
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
    return outcomes


async def reconcile(run: JobRun) -> dict[str, int]:
    return await reconcile_all(run.ctx)


SEND_ORDER = queued("live.send_order", send_order, attempts=4, retry_delay_s=2)
RESEND_STALE = scheduled(
    "live.resend_stale", resend_stale, every=lambda settings: settings.live_resend_stale_every_s
)
RECONCILE = scheduled(
    "live.reconcile", reconcile, every=lambda settings: settings.live_reconcile_every_s
)
JOBS = (SEND_ORDER, RESEND_STALE, RECONCILE)


def enqueue_sends(jobs: Jobs) -> Subscriber:
    """After a commit that queued mirrored orders, one send job each. (A process killed between
    that commit and this enqueue leaves the row `queued`: `live.resend_stale` sends it.)"""

    async def on_events(events: Sequence[DomainEvent]) -> None:
        for event in events:
            if isinstance(event, LiveOrderQueued):
                await jobs.enqueue(SEND_ORDER, live_order_id=event.live_order_id)

    return on_events
