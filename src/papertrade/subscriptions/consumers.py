"""Subscription signals: each trade of a followed portfolio becomes a durable
`subscription.signal` event per subscriber, filtered by their events, symbols and tier; the inbox
and the other channels (issue #18) deliver it.

The five kinds (B4): `open` and `close` come from the portfolio's fills (a flip is both);
`modify` from a take-profit / stop-loss (a reduce-only conditional order) placed, replaced or
cancelled by its owner; `tp_hit` and `sl_hit` from such an order triggering
(docs/subscriptions.md).

A strategy's subscribers get its executed signals instead (`open` for an entry, `close` for an
exit), at the price its order got, from every deployment of the strategy."""

from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from papertrade.copytrading.mirror import FILLED, LeaderFill, leader_fill
from papertrade.models import Order, Portfolio, Strategy, Subscription
from papertrade.outbox.dispatcher import Consumer
from papertrade.outbox.store import StoredEvent
from papertrade.subscriptions import trade_facts
from papertrade.subscriptions.events import SubscriptionSignal
from papertrade.subscriptions.service import ACTIVE, FREE
from papertrade.trading import position as position_math
from papertrade.uow import AsyncWork

FREE_EVENTS = frozenset({"close"})  # the free tier sees closed trades only, in the inbox
FREE_CHANNELS = ("inbox",)
PLACED, CANCELED, TRIGGERED = "conditional.new", "conditional.canceled", "conditional.triggered"
CONDITIONAL = frozenset({PLACED, CANCELED, TRIGGERED})


def _send(
    uow: AsyncWork, followers: Sequence[Subscription], kind: str, body: dict[str, Any]
) -> None:
    """One signal per subscriber whose tier, events and symbols let `kind` through."""
    for sub in followers:
        wanted = set(sub.events.split(","))
        if sub.tier == FREE and sub.portfolio_id is not None:  # a strategy's signals are public
            wanted &= FREE_EVENTS
        symbols = [s for s in sub.symbols.split(",") if s]
        if kind not in wanted or (symbols and body["symbol"] not in symbols):
            continue
        free_portfolio = sub.tier == FREE and sub.portfolio_id is not None
        channels = FREE_CHANNELS if free_portfolio else tuple(sub.channels.split(","))
        uow.emit(
            SubscriptionSignal(
                subscription_id=sub.id, user_id=sub.user_id, channels=channels, signal=body
            )
        )


def protection_kind(event_type: str, conditional: Mapping[str, Any]) -> str | None:
    """`modify`, `tp_hit` or `sl_hit` for an event of a take-profit / stop-loss; None for a
    conditional order that opens (a stop entry is no protection: its fill is an `open`)."""
    if not conditional.get("reduce_only"):
        return None
    if event_type != TRIGGERED:
        return "modify"
    return "tp_hit" if str(conditional.get("type", "")).startswith("take_profit") else "sl_hit"


async def signal(uow: AsyncWork, events: Sequence[StoredEvent]) -> None:
    wanted = [
        e
        for e in events
        if e.portfolio_id is not None
        and (e.type == FILLED or protection_kind(e.type, e.data) is not None)
    ]
    if not wanted:
        return
    session = uow.session
    subs = (
        await session.scalars(
            select(Subscription)
            .where(
                Subscription.portfolio_id.in_({e.portfolio_id for e in wanted}),
                Subscription.status == ACTIVE,
            )
            .order_by(Subscription.id)
        )
    ).all()
    if not subs:
        return
    for event in wanted:
        followers = [s for s in subs if s.portfolio_id == event.portfolio_id]
        if not followers:
            continue
        portfolio = await session.get(Portfolio, event.portfolio_id)
        name = portfolio.name if portfolio is not None else ""
        if event.type != FILLED:
            kind = protection_kind(event.type, event.data)
            assert kind is not None
            _send(uow, followers, kind, _protection_body(event, kind, name))
            continue
        fill = await leader_fill(session, event)
        kinds = [k for k, size in (("close", fill.closing), ("open", fill.opening)) if size > 0]
        for kind in kinds:
            body = {
                "signal_id": f"{fill.order_id}:{kind}",
                "event": kind,
                "portfolio_id": fill.portfolio_id,
                "portfolio_name": name,
                "symbol": fill.symbol,
                "side": "close" if kind == "close" else ("long" if fill.side.sign > 0 else "short"),
                "order_type": str(event.data.get("type", "market")),
                "price": fill.price,
                "quantity": fill.closing if kind == "close" else fill.opening,
                "leverage": fill.leverage,
                "ts": event.time,
            }
            body.update(await _trade_facts(session, fill, kind))
            _send(uow, followers, kind, body)


async def _trade_facts(session: AsyncSession, fill: LeaderFill, kind: str) -> dict[str, Any]:
    """An open's take-profits and stop-loss (`tp`, `sl`: B4's payload) and margin type; a
    close's realised PnL and that as a percent of the closed part's entry value."""
    if kind == "open":
        exits = await trade_facts.exits_of(
            session, fill.portfolio_id, fill.symbol, fill.side.opposite, fill.order_id
        )
        margin = await trade_facts.margin_type(session, fill.portfolio_id, fill.symbol)
        return {"tp": exits.take_profits, "sl": exits.stop_loss, "margin_type": margin}
    pnl = await trade_facts.realized_pnl(session, fill.order_id)
    pct = position_math.closed_pnl_pct(fill.price, fill.closing, pnl, fill.side.sign)
    return {"realized_pnl": pnl, "pnl_pct": pct}


def _protection_body(event: StoredEvent, kind: str, portfolio_name: str) -> dict[str, Any]:
    """A take-profit / stop-loss placed, cancelled (`modify`) or triggered (`tp_hit`,
    `sl_hit`): what it watches and, once triggered, the order it placed."""
    data = event.data
    change = {PLACED: "placed", CANCELED: "cancelled", TRIGGERED: "triggered"}[event.type]
    return {
        "signal_id": f"c{data['id']}:{change}",
        "event": kind,
        "change": change,
        "portfolio_id": event.portfolio_id,
        "portfolio_name": portfolio_name,
        "symbol": data["symbol"],
        "side": "close",
        "conditional_type": data["type"],
        "order_type": str(data["type"]),
        "price": data.get("trigger_price"),
        "trigger_price": data.get("trigger_price"),
        "quantity": data.get("quantity"),  # None: the whole position (close_position)
        "close_position": bool(data.get("close_position")),
        "order_id": data.get("actual_order_id"),
        "ts": event.time,
    }


async def strategy_signal(uow: AsyncWork, events: Sequence[StoredEvent]) -> None:
    executed = [e for e in events if e.data.get("outcome") == "executed" and e.data.get("order_id")]
    if not executed:
        return
    session = uow.session
    strategy_ids = {int(e.data["strategy_id"]) for e in executed}
    subs = (
        await session.scalars(
            select(Subscription)
            .where(Subscription.strategy_id.in_(strategy_ids), Subscription.status == ACTIVE)
            .order_by(Subscription.id)
        )
    ).all()
    if not subs:
        return
    names = dict(
        (
            await session.execute(
                select(Strategy.id, Strategy.name).where(Strategy.id.in_(strategy_ids))
            )
        ).all()
    )
    for event in executed:
        strategy_id = int(event.data["strategy_id"])
        followers = [s for s in subs if s.strategy_id == strategy_id]
        order = await session.get(Order, int(event.data["order_id"])) if followers else None
        if order is None:
            continue
        intent = event.data.get("intent") or {}
        kind = "close" if intent.get("action") == "close" or order.action == "close" else "open"
        filled = order.filled_quantity > 0
        body = {
            "signal_id": f"s{strategy_id}:{order.id}",
            "event": kind,
            "strategy_id": strategy_id,
            "portfolio_name": f"Strategy {names.get(strategy_id, strategy_id)}",
            "symbol": order.symbol,
            "side": "close" if kind == "close" else ("long" if order.side == "buy" else "short"),
            "order_type": order.type,
            "price": order.avg_price if filled else order.price,
            "quantity": order.filled_quantity if filled else order.quantity,
            "leverage": intent.get("leverage"),
            "ts": event.time,
        }
        if kind == "close" and filled:  # its PnL, so Telegram gets B2.7's close notice
            closing = 1 if order.side == "buy" else -1
            body["realized_pnl"] = order.realized_pnl
            body["pnl_pct"] = position_math.closed_pnl_pct(
                order.avg_price, order.filled_quantity, order.realized_pnl, closing
            )
        if body["price"] is not None:
            _send(uow, followers, kind, body)


# It writes only outbox events, so the SQLite order writer keeps what it remembers.
SIGNALS = Consumer(
    "subscriptions.signals",
    signal,
    types=frozenset({FILLED}) | CONDITIONAL,
    own_tables_only=True,
)

STRATEGY_SIGNALS = Consumer(
    "subscriptions.strategy_signals",
    strategy_signal,
    types=frozenset({"signal.strategy"}),
    own_tables_only=True,
)
