"""Every kind of notification (docs/notifications.md lists them for users).

Kinds with renderers are produced from the durable outbox; a kind without them is sent by its
area directly with `notifications.service.notify_many` inside that area's unit of work.
"""

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from papertrade.notifications.area_kinds import AREA_KINDS
from papertrade.notifications.kinds import Channels, Kind, Message, page_of
from papertrade.notifications.numbers import price, quantity, usdt
from papertrade.notifications.security_kinds import SECURITY
from papertrade.outbox.store import StoredEvent
from papertrade.tg.text import close_notice, cornix_block, escape


def _rate(value: Any) -> str:
    """A funding rate in percent, as the app shows it ("+0.0100%")."""
    if value is None:
        return "?"
    rate = Decimal(str(value)) * 100
    return f"{'+' if rate >= 0 else ''}{rate.quantize(Decimal('0.0001'))}%"


# Who placed an order, as a sentence's subject (the others read "Your stop-loss").
_WHO = {
    "liquidation": "The liquidation engine",
    "copy trading": "Copy trading",
    "signal": "A signal",
}


def _order_filled(event: StoredEvent) -> Message:
    order = event.data
    side = str(order.get("side", "")).lower()
    verb = "Bought" if side == "buy" else "Sold"
    symbol = order.get("symbol", "")
    # Who placed it when the user did not (orders/origin.py): a stop that fired says so.
    placed_by = order.get("placed_by")
    who = f"{_WHO.get(placed_by, f'Your {placed_by}')} {verb.lower()}" if placed_by else verb
    body = (
        f"{who} {quantity(order.get('filled_quantity'))} {symbol} at "
        f"{price(symbol, order.get('avg_price'))} ({str(order.get('type', '')).lower()} order "
        f"#{order.get('id')}), commission {usdt(order.get('commission', 0))} USDT."
    )
    title = f"{symbol} {placed_by} filled" if placed_by else f"{symbol} {side} order filled"
    return Message(title, body, _keep(order, "id", "symbol", "side", "placed_by"))


def _liquidated(event: StoredEvent) -> Message:
    position = event.data
    symbol = position.get("symbol", "")
    body = (
        f"Your {symbol} position was closed by the liquidation engine at "
        f"{price(symbol, position.get('mark_price'))}: the portfolio's equity fell to its "
        "maintenance margin."
    )
    return Message(f"{symbol} position liquidated", body, _keep(position, "symbol"))


def _funding(event: StoredEvent) -> Message:
    data = event.data
    amount = Decimal(str(data.get("amount", 0)))
    verb = "received" if amount >= 0 else "paid"
    body = (
        f"Funding {verb} on {data.get('symbol')}: {usdt(abs(amount))} USDT "
        f"at a rate of {_rate(data.get('rate'))}."
    )
    return Message(
        f"{data.get('symbol')} funding {verb}",
        body,
        _keep(data, "symbol", "amount", "funding_time"),
    )


SIGNAL_OUTCOMES = {"signal.executed": "executed", "signal.rejected": "rejected"}


def _signal(event: StoredEvent) -> Message:
    signal = event.data
    outcome = SIGNAL_OUTCOMES.get(event.type, "ignored")
    source = str(signal.get("source", "tv"))
    title = f"Signal {outcome} ({source})"
    body = str(signal.get("msg") or "")
    if outcome == "executed":
        orders = signal.get("order_ids") or []
        body = body or f"Placed {len(orders)} order(s): {', '.join(f'#{o}' for o in orders)}."
    data = {"signal_id": signal.get("id"), "source": source}
    footer = f"Signal {signal.get('id')} ({source}): {body}"
    block = _cornix(signal.get("parsed"), footer) or _closed(signal.get("closed"), footer)
    page = page_of(portfolio_id=event.portfolio_id)
    return Message(title, body, data, block if outcome == "executed" else None, link=page)


def _closed(closed: Any, footer: str) -> str | None:
    """The positions an executed signal closed, as B2.7's close notices; None if it closed none."""
    if not isinstance(closed, list) or not closed:
        return None
    notices = [
        close_notice(
            str(c["symbol"]),
            Decimal(str(c["price"])),
            Decimal(str(c["realized_pnl"])),
            Decimal(str(c["pnl_pct"])),
        )
        for c in closed
    ]
    return "\n".join(notices) + f"\n\n{escape(footer)}"


def _cornix(parsed: Any, footer: str) -> str | None:
    """An executed opening signal as a Cornix-compatible block (domain rules B2.7), so users
    can forward it; None for anything else (closes, several commands)."""
    command = parsed[0] if isinstance(parsed, list) and len(parsed) == 1 else parsed
    if not isinstance(command, dict) or command.get("action") not in ("buy", "sell"):
        return None
    try:
        entry = command.get("price")
        leverage = command.get("leverage")
        return cornix_block(
            str(command.get("symbol", "")),
            str(command["action"]),
            leverage=int(leverage) if leverage is not None else None,
            entries=[Decimal(str(entry))] if entry is not None else [],
            take_profits=[
                Decimal(str(p)) for p in command.get("take_profits") or command.get("tp") or []
            ],
            stops=[Decimal(str(p)) for p in command.get("stop") or []],
            footer=footer,
        )
    except (ArithmeticError, ValueError, TypeError):
        return None


def _keep(data: Mapping[str, Any], *names: str) -> dict[str, Any]:
    return {name: data.get(name) for name in names}


FILL = Kind(
    "fill",
    "An order filled (market orders at once, limit orders when the price reaches them).",
    Channels(inbox=True, telegram=True, email=False),
    {"order.filled": _order_filled},
)
LIQUIDATION = Kind(
    "liquidation",
    "A position was liquidated.",
    Channels(inbox=True, telegram=True, email=True),
    {"position.liquidated": _liquidated},
)
FUNDING = Kind(
    "funding",
    "Funding paid or received on an open position (every funding time).",
    Channels(inbox=True, telegram=False, email=False),
    {"funding.charged": _funding},
)
SIGNAL = Kind(
    "signal",
    "An inbound signal (TradingView webhook…) was executed, rejected or ignored.",
    Channels(inbox=True, telegram=True, email=False),
    {"signal.executed": _signal, "signal.rejected": _signal, "signal.ignored": _signal},
)
SYSTEM = Kind(
    "system",
    "Announcements and account notices sent by the service itself.",
    Channels(inbox=True, telegram=False, email=False),
)

MARKET_ALERT = Kind(
    "market_alert",
    "An alert from a market-data provider you connected (Finnhub).",
    Channels(inbox=True, telegram=True, email=False),
)

KINDS: tuple[Kind, ...] = (
    FILL,
    LIQUIDATION,
    FUNDING,
    SIGNAL,
    SYSTEM,
    MARKET_ALERT,
    *AREA_KINDS,
    SECURITY,
)
BY_NAME: dict[str, Kind] = {kind.name: kind for kind in KINDS}
# outbox event type → the kind (and its renderer) that turns it into a notification
BY_EVENT: dict[str, Kind] = {event_type: kind for kind in KINDS for event_type in kind.renderers}
