"""What each provider's events do (run by the job `inbound.process`, once per event)."""

from typing import Any

import orjson
from sqlalchemy import func, update

from papertrade.models import EmailMessage, EmailSuppression, InboundEvent
from papertrade.notifications import service as notifications
from papertrade.notifications.kinds import Message
from papertrade.uow import AsyncWork

SUPPRESSING = {"email.bounced": "bounced", "email.complained": "complained"}


def _recipients(data: dict[str, Any]) -> list[str]:
    to = data.get("to")
    if isinstance(to, str):
        to = [to]
    if not isinstance(to, list):
        return []
    return [str(a).strip().lower()[:320] for a in to if isinstance(a, str)][:50]


async def _mark_sent(uow: AsyncWork, addresses: list[str], status: str) -> None:
    """Our sent mail to these addresses takes the provider's verdict. Mail goes out over SMTP,
    which gives us no provider message id, so the address is the link."""
    if addresses:
        await uow.session.execute(
            update(EmailMessage)
            .where(func.lower(EmailMessage.to_address).in_(addresses))
            .where(EmailMessage.status == "sent")
            .values(status=status)
        )


async def resend(uow: AsyncWork, event: InboundEvent, body: dict[str, Any]) -> str:
    """Resend's events: a hard bounce or a complaint suppresses the address (no more
    non-transactional mail); delivered marks our sent mail delivered; delayed is noted."""
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
        await _mark_sent(uow, addresses, SUPPRESSING[kind])
        return f"suppressed {', '.join(addresses) or 'nobody'} ({SUPPRESSING[kind]})"
    if kind == "email.delivered":
        await _mark_sent(uow, addresses, "delivered")
        return "delivered"
    return f"noted ({kind or 'no type'})"


async def finnhub(uow: AsyncWork, event: InboundEvent, body: Any) -> str:
    """A Finnhub alert: a `market_alert` notification to the source's owner."""
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
    message = Message(
        title, "\n".join(lines), {"inbound_event_id": event.id, "provider": "finnhub"}
    )
    await notifications.notify_many(uow, [event.user_id], "market_alert", message)
    return "notified"


HANDLERS = {"resend": resend, "finnhub": finnhub}


async def process(uow: AsyncWork, event_row_id: int) -> str:
    event = await uow.session.get(InboundEvent, event_row_id, with_for_update=True)
    if event is None:
        return "unknown event"
    if event.processed_at is not None:
        return event.outcome
    try:
        body = orjson.loads(event.body)
    except orjson.JSONDecodeError:
        body = {}
    handler = HANDLERS.get(event.provider)
    outcome = await handler(uow, event, body) if handler is not None else "no handler"
    event.processed_at = uow.now()
    event.outcome = outcome[:300]
    return outcome
