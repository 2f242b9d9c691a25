"""Inbound signal webhooks (docs/webhooks.md) and the portfolio's signal history."""

from typing import Annotated

from fastapi import APIRouter, Query, Request

from papertrade.auth.v1 import Caller, Ctx, vouch
from papertrade.errors import PapertradeError
from papertrade.kit.ids import Id
from papertrade.portfolios import service as portfolio_service
from papertrade.webhooks import service, signals
from papertrade.webhooks.errors import PayloadTooLarge, WebhookNotFound, WebhookRevoked
from papertrade.webhooks.schemas import SignalOrder, SignalPage, SignalRead, WebhookAccepted

router = APIRouter(tags=["webhooks"])  # under /v1 (and the legacy prefix)
root_router = APIRouter(tags=["webhooks"])  # /webhook/tv/<token>, the address the spec gives

TV_DESCRIPTION = """TradingView-style alert: the body is the alert message, JSON or plain text
(`buy BTCUSDT 0.01`). The token in the path is the only credential and reaches only its own
portfolio. 200 when executed, ignored or a duplicate; 4xx with a message saying what to fix."""


async def _tv(token: str, request: Request, ctx: Ctx) -> WebhookAccepted:
    raw = await request.body()
    try:
        received = await service.receive(ctx, token, raw, request.headers.get("content-type", ""))
    except (WebhookNotFound, WebhookRevoked, PayloadTooLarge):
        raise  # the token was refused (or never looked at): the address pays (auth/ip_budget.py)
    except PapertradeError:
        vouch(request)  # a live token with a wrong alert: the token's own budget pays
        raise
    vouch(request)
    return WebhookAccepted(
        signal_id=received.signal_id,
        status=received.status,
        msg=received.msg,
        orders=[SignalOrder.model_validate(o) for o in received.orders],
        duplicate_of=received.duplicate_of,
    )


@root_router.post("/webhook/tv/{token}", response_model=WebhookAccepted, description=TV_DESCRIPTION)
async def tv_alert_root(token: str, request: Request, ctx: Ctx) -> WebhookAccepted:
    return await _tv(token, request, ctx)


@router.post("/webhook/tv/{token}", response_model=WebhookAccepted, description=TV_DESCRIPTION)
async def tv_alert(token: str, request: Request, ctx: Ctx) -> WebhookAccepted:
    return await _tv(token, request, ctx)


@router.get("/portfolios/{portfolio_id}/signals", response_model=SignalPage)
async def list_signals(
    portfolio_id: Id,
    principal: Caller,
    ctx: Ctx,
    before_id: Id | None = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 100,
) -> SignalPage:
    """Received alerts, newest first: raw body, parse result, orders and outcome."""
    async with ctx.db.reader() as session:
        await portfolio_service.get_owned(session, principal, portfolio_id)
        rows = await signals.history(session, portfolio_id, before_id, limit)
    page = [SignalRead.model_validate(r) for r in rows]
    return SignalPage(signals=page, next_before_id=page[-1].id if len(page) == limit else None)


@router.get("/portfolios/{portfolio_id}/signals/{signal_id}", response_model=SignalRead)
async def get_signal(portfolio_id: Id, signal_id: Id, principal: Caller, ctx: Ctx) -> SignalRead:
    """One received alert."""
    async with ctx.db.reader() as session:
        await portfolio_service.get_owned(session, principal, portfolio_id)
        return SignalRead.model_validate(await signals.one(session, portfolio_id, signal_id))
