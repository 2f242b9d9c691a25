"""Inbound webhooks: the email provider's events and the sources users connect (Finnhub)."""

import hashlib
from typing import Annotated

import orjson
from fastapi import APIRouter, Query, Request
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

from papertrade.auth.v1 import Caller, Ctx, WebUser, Writer, vouch
from papertrade.errors import BadRequest, NotFound, Unauthorized
from papertrade.inbound import jobs, service
from papertrade.inbound.schemas import (
    Accepted,
    EventPage,
    EventRead,
    SourceCreate,
    SourceCreated,
    SourceRead,
    SourceSignal,
)
from papertrade.kit.ids import Id, is_id
from papertrade.kit.security import constant_equal, token_hash
from papertrade.models import InboundSource
from papertrade.portfolios import service as portfolio_service
from papertrade.webhooks.errors import PayloadTooLarge

router = APIRouter(tags=["webhooks"])


def _too_large(body: bytes) -> None:
    if len(body) > service.MAX_BODY_BYTES:
        raise PayloadTooLarge(f"Events are limited to {service.MAX_BODY_BYTES} bytes.")


async def _enqueue(request: Request, stored: service.Stored) -> Accepted:
    if not stored.duplicate:
        await request.app.state.jobs.enqueue(jobs.PROCESS_EVENT, event_id=stored.event_id)
    return Accepted(duplicate=stored.duplicate)


@router.post("/webhook/email/resend", response_model=Accepted)
async def resend_event(request: Request, ctx: Ctx) -> Accepted:
    """Resend's delivery events, signed by Svix: verified on the raw body (HMAC-SHA256 of
    `id.timestamp.body`, ±5 minutes) before anything is parsed; de-duplicated on `svix-id`."""
    secret = ctx.settings.resend_webhook_secret
    if not secret:
        raise NotFound("The email provider's webhook is not configured.", code="webhook_not_found")
    body = await request.body()
    _too_large(body)
    headers = {
        "webhook-id": request.headers.get("svix-id", ""),
        "webhook-timestamp": request.headers.get("svix-timestamp", ""),
        "webhook-signature": request.headers.get("svix-signature", ""),
    }
    try:
        Webhook(secret).verify(body, headers, json_parse=False)
    except (WebhookVerificationError, ValueError, UnicodeDecodeError) as exc:
        raise Unauthorized(
            f"The Svix signature does not verify ({exc}).", code="invalid_signature"
        ) from exc
    vouch(request)
    await service.rate_limit(ctx, "resend", "all")
    event = orjson.loads(body)
    event_type = event.get("type", "") if isinstance(event, dict) else ""
    stored = await service.store(ctx, "resend", headers["webhook-id"], str(event_type), body)
    return await _enqueue(request, stored)


@router.post("/webhook/finnhub/{source_id}", response_model=Accepted)
async def finnhub_event(source_id: str, request: Request, ctx: Ctx) -> Accepted:
    """A Finnhub alert for the source's owner: `X-Finnhub-Secret` must be the source's secret
    (compared in constant time, before the body is parsed). Acknowledged at once."""
    missing = NotFound("No webhook source has this address.", code="webhook_not_found")
    if not (source_id.isascii() and source_id.isdigit()) or not is_id(int(source_id[:12])):
        raise missing
    async with ctx.db.reader() as session:
        source = await session.get(InboundSource, int(source_id))
    if source is None or source.provider != "finnhub" or source.revoked_at is not None:
        raise missing
    given = request.headers.get("x-finnhub-secret", "")
    if not constant_equal(token_hash(given), source.secret_hash):
        raise Unauthorized("Missing or wrong X-Finnhub-Secret.", code="invalid_signature")
    vouch(request)
    body = await request.body()
    _too_large(body)
    await service.rate_limit(ctx, "finnhub", source.id)
    try:
        event = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise BadRequest("The body must be JSON.", code="invalid_event") from exc
    given_id = event.get("id") if isinstance(event, dict) else None
    # Finnhub events carry no id of their own everywhere: the body's digest stands in for it.
    event_id = (
        f"{source.id}:{given_id}" if given_id else f"{source.id}:{hashlib.sha256(body).hexdigest()}"
    )
    event_type = str(event.get("event", "alert")) if isinstance(event, dict) else "alert"
    stored = await service.store(
        ctx, "finnhub", event_id, event_type, body, source_id=source.id, user_id=source.user_id
    )
    return await _enqueue(request, stored)


def _read(row: InboundSource, base_url: str) -> dict[str, object]:
    return {
        "id": row.id,
        "provider": row.provider,
        "note": row.note,
        "url": f"{base_url.rstrip('/')}/v1/webhook/{row.provider}/{row.id}",
        "created_at": row.created_at,
        "revoked_at": row.revoked_at,
        "signal_portfolio_id": row.signal_portfolio_id,
        "signal_action": row.signal_action,
        "signal_size_percent": row.signal_size_percent,
    }


@router.post("/webhook-sources", status_code=201, response_model=SourceCreated)
async def create_source(body: SourceCreate, principal: WebUser, ctx: Ctx) -> SourceCreated:
    """Connect a provider: its webhook URL and secret (the secret is in this response only)."""
    async with ctx.transaction() as uow:
        row, secret = await service.create_source(uow, principal.user_id, body.provider, body.note)
        shown = _read(row, ctx.settings.public_base_url)
    return SourceCreated.model_validate({**shown, "secret": secret})


@router.get("/webhook-sources", response_model=list[SourceRead])
async def list_sources(principal: Caller, ctx: Ctx) -> list[SourceRead]:
    async with ctx.db.reader() as session:
        rows = await service.sources_of(session, principal.user_id)
        return [SourceRead.model_validate(_read(r, ctx.settings.public_base_url)) for r in rows]


@router.delete("/webhook-sources/{source_id}", response_model=SourceRead)
async def revoke_source(source_id: Id, principal: WebUser, ctx: Ctx) -> SourceRead:
    """Disconnect: its URL stops working at once; its history stays."""
    async with ctx.transaction() as uow:
        row = await service.owned_source(uow.session, principal.user_id, source_id)
        if row.revoked_at is None:
            row.revoked_at = uow.now()
        return SourceRead.model_validate(_read(row, ctx.settings.public_base_url))


@router.put("/webhook-sources/{source_id}/signal", response_model=SourceRead)
async def set_signal(source_id: Id, body: SourceSignal, principal: Writer, ctx: Ctx) -> SourceRead:
    """Make each alert of this source also trade one of your portfolios (`portfolio_id: null`
    stops it): at market, the chosen action, `size_percent` of equity as margin."""
    async with ctx.transaction() as uow:
        if body.portfolio_id is not None:  # someone else's portfolio is a 404
            await portfolio_service.get_owned(uow.session, principal, body.portfolio_id)
        row = await service.owned_source(uow.session, principal.user_id, source_id)
        row.signal_portfolio_id = body.portfolio_id
        row.signal_action = body.action if body.portfolio_id is not None else None
        row.signal_size_percent = body.size_percent if body.portfolio_id is not None else None
        return SourceRead.model_validate(_read(row, ctx.settings.public_base_url))


@router.get("/webhook-sources/{source_id}/events", response_model=EventPage)
async def list_events(
    source_id: Id,
    principal: Caller,
    ctx: Ctx,
    before_id: Id | None = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
) -> EventPage:
    """Every event the source received, newest first, with what became of it."""
    async with ctx.db.reader() as session:
        await service.owned_source(session, principal.user_id, source_id)
        rows = await service.events_of(session, source_id, before_id, limit)
        events = [EventRead.model_validate(r) for r in rows]
    return EventPage(events=events, next_before_id=events[-1].id if len(events) == limit else None)
