"""A Finnhub alert as a signal (optional; issue item 10): when the source's owner chose a
portfolio for it (`PUT /v1/webhook-sources/{id}/signal`), each alert also trades that
portfolio, through the same path as the `tv` and `tg` sources (webhooks/execute.py →
place_one/place_all, staleness, de-duplication, signal history with source `finnhub`).

What is traded: the alert's symbol (`symbol` or `s`, e.g. `BINANCE:BTCUSDT` → BTCUSDT), at
market, with the action chosen for the source (`buy`, `sell` or `close`) unless the alert
itself names one in an `action` field, sized at `size_percent` of the portfolio's equity as
margin. The inbound event's row id is the de-duplication key: a retried job never trades twice.
The signal runs in its own transactions, before the event is marked processed (the job holds no
transaction meanwhile, so this also works on SQLite's single writer).
"""

import html
from decimal import Decimal
from typing import Any

import orjson

from papertrade.context import AppContext
from papertrade.errors import PapertradeError
from papertrade.kit.decimals import plain
from papertrade.models import InboundEvent, InboundSource
from papertrade.tg.signals import Source, record, run
from papertrade.webhooks import command as commands
from papertrade.webhooks.errors import SignalError

ACTIONS = ("buy", "sell", "close")


def _first_item(body: Any) -> dict[str, Any] | None:
    items = body if isinstance(body, list) else [body]
    for item in items[:10]:
        if isinstance(item, dict) and (item.get("symbol") or item.get("s")):
            return item
    return None


def fields_of(body: Any, action: str, size_percent: str) -> dict[str, Any]:
    """The `tv` command fields an alert stands for; SignalError says what is missing."""
    item = _first_item(body)
    if item is None:
        raise SignalError("The alert names no symbol ('symbol' or 's'): nothing to trade.")
    named = item.get("action")
    chosen = named.lower() if isinstance(named, str) and named.lower() in ACTIONS else action
    fields: dict[str, Any] = {
        "symbol": str(item.get("symbol") or item.get("s"))[:40],
        "action": chosen,
        "order_type": "market",
    }
    if chosen != "close":
        fields["qty"] = size_percent
        fields["qty_type"] = "percent_equity"
    return fields


async def trade(ctx: AppContext, event_row_id: int) -> str | None:
    """Trade the configured portfolio for this event; the outcome, or None when the source
    trades nothing (no portfolio chosen) or the event was already processed."""
    async with ctx.db.reader() as session:
        event = await session.get(InboundEvent, event_row_id)
        if event is None or event.processed_at is not None or event.source_id is None:
            return None
        source = await session.get(InboundSource, event.source_id)
    if source is None or source.signal_portfolio_id is None or event.user_id is None:
        return None
    percent = source.signal_size_percent
    signal_source = Source(
        event.user_id,
        source.signal_portfolio_id,
        percent if percent is not None else Decimal(5),
        event.id,
        event.received_at,
        kind="finnhub",
    )
    try:
        body = orjson.loads(event.body)
    except orjson.JSONDecodeError:
        body = None
    instruments = ctx.market.instruments() if ctx.market is not None else {}
    try:
        fields = fields_of(body, source.signal_action or "buy", plain(signal_source.size_percent))
        command = commands.build(fields, 1, instruments)
    except PapertradeError as exc:  # the same history row as a refused tg signal
        reply = await record(ctx, signal_source, event.body, "invalid", exc, None)
    else:
        reply = await run(ctx, signal_source, event.body, [command], command.as_json())
    return html.unescape(reply)
