"""The signal history: how received alerts are kept and announced."""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import orjson
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from papertrade.auth.principal import Principal
from papertrade.context import AppContext
from papertrade.errors import NotFound, PapertradeError
from papertrade.models import Signal, WebhookToken
from papertrade.orders.events import OrderRejected
from papertrade.orders.record import AnyOrder
from papertrade.trading import position as position_math
from papertrade.trading.enums import Action, Side
from papertrade.uow import AsyncWork
from papertrade.webhooks.command import Command
from papertrade.webhooks.events import (
    SignalDuplicate,
    SignalEvent,
    SignalReceived,
    SignalRejected,
)
from papertrade.webhooks.schemas import SignalRead


@dataclass
class Alert:
    """One received alert on its way through: who sent it and what it said."""

    token: WebhookToken
    principal: Principal
    body: str
    content_type: str
    body_format: str = "text"
    parsed: Any = None


def _storable(value: Any) -> Any:
    """JSON without NUL characters (PostgreSQL text cannot hold them)."""
    return orjson.loads(orjson.dumps(value).replace(b"\\u0000", b"\\ufffd"))


def new_signal(alert: Alert, status: str) -> Signal:
    return Signal(
        portfolio_id=alert.token.portfolio_id,
        token_id=alert.token.id,
        source="tv",
        content_type=alert.content_type,
        body=alert.body,
        body_format=alert.body_format,
        parsed=_storable(alert.parsed),
        status=status,
        order_ids=[],
    )


def signal_event_data(signal: Signal) -> dict[str, Any]:
    """The whole signal as GET …/signals lists it, so a page can show it without a read."""
    return SignalRead.model_validate(signal).model_dump(mode="json")


def announce(
    uow: AsyncWork, signal: Signal, kind: type[SignalEvent], orders: Sequence[AnyOrder] = ()
) -> None:
    """Queue a `signal.*` event (published after the commit). Given the orders it placed, an
    executed signal also says which positions they closed (`closed`: the Telegram close
    notice, domain rules B2.7)."""
    data = signal_event_data(signal)
    closed = closes(orders)
    if closed:
        data["closed"] = closed
    uow.emit(kind(portfolio_id=signal.portfolio_id, signal=data))


def closes(orders: Sequence[AnyOrder]) -> list[dict[str, Any]]:
    """Each filled closing order: symbol, price, quantity, realised PnL and its percent."""
    return [
        {
            "symbol": o.symbol,
            "price": str(o.avg_price),
            "quantity": str(o.filled_quantity),
            "realized_pnl": str(o.realized_pnl),
            "pnl_pct": str(
                position_math.closed_pnl_pct(
                    o.avg_price, o.filled_quantity, o.realized_pnl, Side(o.side).sign
                )
            ),
        }
        for o in orders
        if o.action == Action.CLOSE and o.filled_quantity > 0
    ]


async def record(
    ctx: AppContext,
    alert: Alert,
    status: str,
    error: PapertradeError,
    *,
    rejected: list[Command] | None = None,
) -> Signal:
    """Keep an alert that did not execute, and tell the portfolio's subscribers why."""
    async with ctx.transaction() as uow:
        session = uow.session
        signal = new_signal(alert, status)
        signal.error = error.code[:40]
        signal.msg = error.message.replace("\x00", "\ufffd")[:1000]
        session.add(signal)
        await session.flush()
        announce(uow, signal, SignalReceived)
        for cmd in (c for c in rejected or [] if c.action != "cancel"):
            data = {
                "signal_id": signal.id,
                "symbol": cmd.symbol,
                "signal_action": cmd.action,
                "type": cmd.order_type,
                "status": "rejected",
                "error": error.code,
                "msg": error.message,
            }
            uow.emit(OrderRejected(portfolio_id=signal.portfolio_id, order=data))
        announce(uow, signal, SignalRejected)
    return signal


async def duplicate(ctx: AppContext, alert: Alert, earlier: int, keyed: bool) -> Signal:
    """Keep a re-sent alert that was not executed again."""
    async with ctx.transaction() as uow:
        session = uow.session
        signal = new_signal(alert, "duplicate")
        signal.duplicate_of = earlier
        signal.msg = f"Already received as signal {earlier}; a re-send is never executed twice."
        if not keyed:
            signal.msg += (
                " To send the same text again on purpose, make each alert unique with "
                "time={{timenow}} or an idempotency_key."
            )
        session.add(signal)
        await session.flush()
        announce(uow, signal, SignalReceived)
        announce(uow, signal, SignalDuplicate)
    return signal


async def history(
    session: AsyncSession, portfolio_id: int, before_id: int | None, limit: int
) -> list[Signal]:
    """A portfolio's signals, newest first; `before_id` pages backwards."""
    statement = select(Signal).where(Signal.portfolio_id == portfolio_id)
    if before_id is not None:
        statement = statement.where(Signal.id < before_id)
    rows = await session.scalars(statement.order_by(Signal.id.desc()).limit(limit))
    return list(rows)


async def one(session: AsyncSession, portfolio_id: int, signal_id: int) -> Signal:
    row = await session.get(Signal, signal_id)
    if row is None or row.portfolio_id != portfolio_id:
        raise NotFound("Signal not found.", code="signal_not_found")
    return row
