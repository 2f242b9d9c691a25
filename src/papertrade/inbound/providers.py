"""What each provider's events do (run by the job `inbound.process`, once per event)."""

from typing import Any

import orjson
from sqlalchemy import func, update

from papertrade.models import EmailMessage, EmailSuppression, InboundEvent
from papertrade.notifications import service as notifications
from papertrade.notifications.kinds import Message
from papertrade.uow import AsyncWork

SUPPRESSING = {"email.bounced": "bounced", "email.complained": "complained"}
# The provider's verdict on our sent mail, and the statuses each may replace: events can arrive
# out of order (Svix retries), so a later, weaker one never undoes a stronger one (a delay
# reported after the delivery leaves it delivered; a complaint, which follows a delivery, wins).
VERDICTS = {
    "email.delivery_delayed": ("delayed", ("sent",)),
    "email.delivered": ("delivered", ("sent", "delayed")),
    "email.bounced": ("bounced", ("sent", "delayed", "delivered")),
    "email.complained": ("complained", ("sent", "delayed", "delivered")),
}


def _recipients(data: dict[str, Any]) -> list[str]:
    to = data.get("to")
    if isinstance(to, str):
        to = [to]
    if not isinstance(to, list):
        return []
    return [str(a).strip().lower()[:320] for a in to if isinstance(a, str)][:50]


async def _mark_sent(uow: AsyncWork, addresses: list[str], kind: str) -> None:
    """Our sent mail to these addresses takes the provider's verdict (VERDICTS). Mail goes out
    over SMTP, which gives us no provider message id, so the address is the link."""
    status, replaces = VERDICTS[kind]
    if addresses:
        await uow.session.execute(
            update(EmailMessage)
            .where(func.lower(EmailMessage.to_address).in_(addresses))
            .where(EmailMessage.status.in_(replaces))
            .values(status=status)
        )


async def resend(uow: AsyncWork, event: InboundEvent, body: dict[str, Any]) -> str:
    """Resend's events: a hard bounce or a complaint suppresses the address (no more
    non-transactional mail); each marks our sent mail to the address (VERDICTS): delayed,
    delivered, bounced, complained. Other types are noted."""
    data = body.get("data") if isinstance(body.get("data"), dict) else {}
    assert isinstance(data, dict)
    addresses = _recipients(data)
    kind = event.type
    if kind in SUPPRESSING:
        bounce = data.get("bounce") if isinstance(data.get("bounce"), dict) else {}
        assert isinstance(bounce, dict)
        if kind == "email.bounced" and str(bounce.get("type", "")).lower() in ("transient", "soft"):
            return f"soft bounce for {', '.join(addresses)}: not suppressed"
        for address in addresses:
            if await uow.session.get(EmailSuppression, address) is None:
                uow.session.add(EmailSuppression(address=address, reason=SUPPRESSING[kind]))
        await _mark_sent(uow, addresses, kind)
        return f"suppressed {', '.join(addresses) or 'nobody'} ({SUPPRESSING[kind]})"
    if kind in VERDICTS:
        await _mark_sent(uow, addresses, kind)
        return VERDICTS[kind][0]
    return f"noted ({kind or 'no type'})"


async def finnhub(uow: AsyncWork, event: InboundEvent, body: Any, traded: str | None = None) -> str:
    """A Finnhub alert: a `market_alert` notification to the source's owner (saying what the
    signal did, when the source trades a portfolio: inbound/signals.py)."""
    if event.user_id is None:
        return "no owner"
    items = body if isinstance(body, list) else [body]
    lines = []
    for item in items[:10]:
        if isinstance(item, dict):
            symbol = str(item.get("symbol") or item.get("s") or "")
            text = item.get("headline") or item.get("message") or item.get("event") or ""
            price = item.get("price") or item.get("p")
            summary = " ".join(str(part) for part in (symbol, text, price) if part)
            lines.append(summary[:300])
    title = f"Finnhub alert: {lines[0][:150]}" if lines else "Finnhub alert"
    if traded is not None:
        lines.append(traded[:1000])
    message = Message(
        title, "\n".join(lines), {"inbound_event_id": event.id, "provider": "finnhub"}
    )
    await notifications.notify_many(uow, [event.user_id], "market_alert", message)
    return f"notified; {traded}" if traded is not None else "notified"


async def process(uow: AsyncWork, event_row_id: int, traded: str | None = None) -> str:
    event = await uow.session.get(InboundEvent, event_row_id, with_for_update=True)
    if event is None:
        return "unknown event"
    if event.processed_at is not None:
        return event.outcome
    try:
        body = orjson.loads(event.body)
    except orjson.JSONDecodeError:
        body = {}
    if event.provider == "resend":
        outcome = await resend(uow, event, body if isinstance(body, dict) else {})
    elif event.provider == "finnhub":
        outcome = await finnhub(uow, event, body, traded)
    else:
        outcome = "no handler"
    event.processed_at = uow.now()
    event.outcome = outcome[:300]
    return outcome
