"""Subscription signals: each trade of a followed portfolio becomes a durable
`subscription.signal` event per subscriber, filtered by their events, symbols and tier; the inbox
and the other channels (issue #18) deliver it."""

from collections.abc import Sequence

from sqlalchemy import select

from papertrade.copytrading.mirror import FILLED, leader_fill
from papertrade.models import Portfolio, Subscription
from papertrade.outbox.dispatcher import Consumer
from papertrade.outbox.store import StoredEvent
from papertrade.subscriptions.events import SubscriptionSignal
from papertrade.subscriptions.service import ACTIVE, FREE
from papertrade.uow import AsyncWork

FREE_EVENTS = frozenset({"close"})  # the free tier sees closed trades only, in the inbox
FREE_CHANNELS = ("inbox",)


async def signal(uow: AsyncWork, events: Sequence[StoredEvent]) -> None:
    filled = [e for e in events if e.type == FILLED and e.portfolio_id is not None]
    if not filled:
        return
    session = uow.session
    subs = (
        await session.scalars(
            select(Subscription)
            .where(
                Subscription.portfolio_id.in_({e.portfolio_id for e in filled}),
                Subscription.status == ACTIVE,
            )
            .order_by(Subscription.id)
        )
    ).all()
    if not subs:
        return
    for event in filled:
        followers = [s for s in subs if s.portfolio_id == event.portfolio_id]
        if not followers:
            continue
        fill = await leader_fill(session, event)
        portfolio = await session.get(Portfolio, event.portfolio_id)
        kinds = [k for k, size in (("close", fill.closing), ("open", fill.opening)) if size > 0]
        for kind in kinds:
            body = {
                "signal_id": f"{fill.order_id}:{kind}",
                "portfolio_id": fill.portfolio_id,
                "portfolio_name": portfolio.name if portfolio is not None else "",
                "symbol": fill.symbol,
                "side": "close" if kind == "close" else ("long" if fill.side.sign > 0 else "short"),
                "order_type": str(event.data.get("type", "market")),
                "price": fill.price,
                "quantity": fill.closing if kind == "close" else fill.opening,
                "leverage": fill.leverage,
                "ts": event.time,
            }
            for sub in followers:
                wanted = set(sub.events.split(","))
                if sub.tier == FREE:
                    wanted &= FREE_EVENTS
                symbols = [s for s in sub.symbols.split(",") if s]
                if kind not in wanted or (symbols and fill.symbol not in symbols):
                    continue
                channels = FREE_CHANNELS if sub.tier == FREE else tuple(sub.channels.split(","))
                uow.emit(
                    SubscriptionSignal(
                        subscription_id=sub.id, user_id=sub.user_id, channels=channels, signal=body
                    )
                )


# It writes only outbox events, so the SQLite order writer keeps what it remembers.
SIGNALS = Consumer("subscriptions.signals", signal, types=frozenset({FILLED}), own_tables_only=True)
