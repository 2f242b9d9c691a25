"""Telegram as a signal source: a bound user's Cornix-style message trades the portfolio they
chose, with the `tv` source's order path (webhooks/execute.py → orders.service.place_one),
staleness rule and signal history (`source: "tg"`). Its stop and take-profits become real
conditional orders once the entry is placed (tg/exits.py).

The update_id is the de-duplication key (Telegram re-delivers an update it got no 2xx for, and
a retried job must not trade twice): it is held 24 hours like an alert's idempotency key.
"""

import hashlib
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from sqlalchemy.exc import IntegrityError

from papertrade.auth.principal import Principal
from papertrade.context import AppContext
from papertrade.errors import PapertradeError
from papertrade.kit.decimals import plain
from papertrade.kit.time import now_ms
from papertrade.models import Signal, SignalDedupe
from papertrade.orders.pricing import Venue
from papertrade.portfolios import service as portfolio_service
from papertrade.tg import cornix, exits, text
from papertrade.trading.errors import TradingRuleError
from papertrade.webhooks import command as commands
from papertrade.webhooks.events import (
    SignalDuplicate,
    SignalEvent,
    SignalExecuted,
    SignalIgnored,
    SignalReceived,
    SignalRejected,
)
from papertrade.webhooks.execute import execute
from papertrade.webhooks.parse import parse_body
from papertrade.webhooks.signals import announce

MAX_LAG_MS = commands.DEFAULT_MAX_LAG_S * 1000
DEDUPE_MS = 24 * 3_600_000


@dataclass(frozen=True, slots=True)
class Source:
    """Who sent the message and where it trades."""

    user_id: int
    portfolio_id: int
    size_percent: Decimal
    update_id: int
    sent_at: int  # the message's date, ms
    # Posted in a connected channel (tg/channels.py): only Cornix signals are read there, and
    # the reply goes to the owner's private chat, named after the channel.
    channel: str | None = None
    # The history's `source` (Finnhub alerts use this path too: inbound/signals.py).
    kind: str = "tg"

    @property
    def dedupe_key(self) -> str:
        """Held 24 hours: the same update (event) never trades twice."""
        what = "tg-update" if self.kind == "tg" else f"{self.kind}-event"
        return hashlib.sha256(f"{what}\n{self.update_id}".encode()).hexdigest()


def _signal(source: Source, body: str, status: str, parsed: Any = None) -> Signal:
    return Signal(
        portfolio_id=source.portfolio_id,
        token_id=None,
        source=source.kind,
        content_type="text/plain" if source.kind == "tg" else "application/json",
        body=body.replace("\x00", "\ufffd"),
        body_format="text" if source.kind == "tg" else "json",
        parsed=parsed,
        status=status,
        order_ids=[],
    )


async def record(
    ctx: AppContext, source: Source, body: str, status: str, error: PapertradeError, parsed: Any
) -> str:
    async with ctx.transaction() as uow:
        signal = _signal(source, body, status, parsed)
        signal.error = error.code[:40]
        signal.msg = error.message[:1000]
        uow.session.add(signal)
        await uow.session.flush()
        announce(uow, signal, SignalReceived)
        announce(uow, signal, SignalRejected)
    return f"Signal {signal.id} not executed ({status}): {text.escape(error.message)}"


def _at_or_better(signal: cornix.CornixSignal, mark: Decimal | None) -> bool:
    """Whether buying (selling) now is at or better than the entry."""
    if mark is None:
        return False
    return mark <= signal.entry if signal.side == "buy" else mark >= signal.entry


def _fields(
    signal: cornix.CornixSignal, size_percent: Decimal, mark: Decimal | None
) -> dict[str, Any]:
    """The entry as `tv` fields: at market when the price is at or better than the entry,
    otherwise a limit resting at the entry. The exits are placed by tg/exits.py."""
    fields: dict[str, Any] = {
        "symbol": signal.symbol,
        "action": signal.side,
        "qty": plain(size_percent),
        "qty_type": "percent_equity",
        "order_type": "market",
        "price": plain(signal.entry),
    }
    if signal.leverage is not None:
        fields["leverage"] = signal.leverage
    if not _at_or_better(signal, mark):
        fields["order_type"] = "limit"
    return fields


def _mark(ctx: AppContext, symbol: str) -> Decimal | None:
    try:
        return Venue.of(ctx).quote(symbol).mark_price
    except PapertradeError:  # unknown symbol or stale price: the order path will say so
        return None


def is_cornix(body: str) -> bool:
    """A Cornix-style signal names entries; anything else is read as the `tv` text commands
    (`close BTCUSDT`, `buy ETHUSDT 0.1`)."""
    return cornix.SECTIONS[2][1].search(body) is not None


def _commands(
    ctx: AppContext, source: Source, body: str
) -> tuple[list[commands.Command], Any, cornix.CornixSignal | None]:
    """The commands of a message, what the history keeps of it, and its Cornix signal."""
    instruments = ctx.market.instruments() if ctx.market is not None else {}
    if source.channel is None and not is_cornix(body):
        _, fields = parse_body(body)
        built = [commands.build(f, n, instruments) for n, f in enumerate(fields, 1)]
        return built, [c.as_json() for c in built], None
    signal = cornix.parse(body)
    mark = _mark(ctx, signal.symbol)
    command = commands.build(_fields(signal, source.size_percent, mark), 1, instruments)
    parsed: dict[str, Any] = {
        **command.as_json(),
        "stop": [plain(p) for p in signal.stops],
        "take_profits": [plain(p) for p in signal.take_profits],
    }
    if signal.entries[1:]:
        parsed["other_entries"] = [plain(p) for p in signal.entries[1:]]
    return [command], parsed, signal


async def receive(ctx: AppContext, source: Source, body: str) -> str:
    """Handle one signal message; returns the reply for the chat (HTML)."""
    try:
        cmds, parsed, parsed_signal = _commands(ctx, source, body)
    except PapertradeError as exc:
        return await record(ctx, source, body, "invalid", exc, None)
    return await run(ctx, source, body, cmds, parsed, parsed_signal)


async def run(
    ctx: AppContext,
    source: Source,
    body: str,
    cmds: list[commands.Command],
    parsed: Any,
    parsed_signal: cornix.CornixSignal | None = None,
) -> str:
    """Execute parsed commands once (staleness, de-duplication, history); returns the reply."""
    age = now_ms() - source.sent_at
    if age > MAX_LAG_MS:
        stale = PapertradeError(
            f"The message is {age // 1000} s old, more than {MAX_LAG_MS // 1000} s; signals must "
            "be acted on promptly. Post it again if it still holds.",
            code="stale_signal",
        )
        return await record(ctx, source, body, "stale", stale, parsed)
    key = source.dedupe_key
    principal = Principal("webhook", source.user_id, 0, "write", portfolio_id=source.portfolio_id)
    try:
        async with ctx.transaction() as uow:
            session = uow.session
            portfolio = await portfolio_service.get_owned(
                session, principal, source.portfolio_id, for_update=True
            )
            signal = _signal(source, body, "received", parsed)
            session.add(signal)
            await session.flush()
            session.add(SignalDedupe(key=key, signal_id=signal.id, expires_at=now_ms() + DEDUPE_MS))
            await session.flush()  # a second run of the same update fails here
            announce(uow, signal, SignalReceived)
            venue = Venue.of(ctx)
            outcome = await execute(uow, venue, principal, portfolio, cmds)
            if parsed_signal is not None and outcome.orders:
                placed = await exits.place(uow, venue, principal, parsed_signal, outcome.orders[0])
                outcome.notes += placed.notes
            signal.order_ids = [o.id for o in outcome.orders + outcome.canceled]
            signal.status = "executed" if outcome.did_something else "ignored"
            summary = "; ".join(
                f"{o.side} {plain(o.quantity)} {o.symbol} {o.type}: {o.status}"
                for o in outcome.orders
            )
            said = "; ".join(part for part in (summary, *outcome.notes) if part)
            signal.msg = (said or "Nothing to do.")[:1000]
            signal.processed_at = now_ms()
            kind: type[SignalEvent] = SignalExecuted if outcome.did_something else SignalIgnored
            announce(uow, signal, kind, outcome.orders)
    except IntegrityError:
        async with ctx.transaction() as uow:
            earlier = await uow.session.get(SignalDedupe, key)
            again = _signal(source, body, "duplicate", parsed)
            again.duplicate_of = earlier.signal_id if earlier else None
            again.msg = (
                f"This {source.kind} update was already handled; it is never executed twice."
            )
            uow.session.add(again)
            await uow.session.flush()
            announce(uow, again, SignalReceived)
            announce(uow, again, SignalDuplicate)
        return "Already handled this message."
    except TradingRuleError as exc:
        error = PapertradeError(exc.message, code=exc.code)
        return await record(ctx, source, body, "rejected", error, parsed)
    except PapertradeError as exc:
        return await record(ctx, source, body, "rejected", exc, parsed)
    return f"Signal {signal.id} {signal.status}: {text.escape(signal.msg)}"
