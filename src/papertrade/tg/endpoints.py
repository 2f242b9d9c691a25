"""/v1/tg/*: binding the account to Telegram; /v1/webhook/tg: the bot's updates."""

import orjson
import segno
from fastapi import APIRouter, Request
from sqlalchemy.exc import IntegrityError

from papertrade.auth.v1 import Caller, Ctx, WebUser, Writer, vouch
from papertrade.errors import BadRequest, NotFound, Unauthorized
from papertrade.kit.security import constant_equal
from papertrade.models import TelegramUpdate
from papertrade.tg import jobs, service
from papertrade.tg.schemas import (
    TelegramAccepted,
    TelegramLinkCreated,
    TelegramSignalSettings,
    TelegramStatus,
)

router = APIRouter(tags=["telegram"])
SECRET_HEADER = "x-telegram-bot-api-secret-token"


@router.post("/tg/link", status_code=201, response_model=TelegramLinkCreated)
async def create_link(principal: WebUser, ctx: Ctx) -> TelegramLinkCreated:
    """A single-use deep link that binds the account to the Telegram user who opens it."""
    bot = ctx.settings.telegram_bot_username
    if not bot or not ctx.settings.telegram_bot_token:
        raise service.TelegramNotConfigured("Telegram is not configured on this server.")
    async with ctx.transaction() as uow:
        code, expires_at = await service.create_link(uow, principal.user_id)
    url = service.deep_link(bot, code)
    qr = segno.make(url, error="m").svg_data_uri(scale=4)
    return TelegramLinkCreated(url=url, expires_at=expires_at, qr_svg=qr)


@router.get("/tg/status", response_model=TelegramStatus)
async def status(principal: Caller, ctx: Ctx) -> TelegramStatus:
    """Whether the account is bound, and whether the bot can still reach the chat."""
    async with ctx.db.reader() as session:
        binding = await service.binding_of(session, principal.user_id)
        return TelegramStatus.model_validate(service.status_view(binding))


@router.delete("/tg/binding", response_model=TelegramStatus)
async def unbind(principal: WebUser, ctx: Ctx) -> TelegramStatus:
    """Unbind (the bot's /unlink does the same); nothing more is sent to the chat."""
    async with ctx.transaction() as uow:
        await service.unbind(uow, principal.user_id)
    return TelegramStatus.model_validate(service.status_view(None))


@router.put("/tg/signals", response_model=TelegramStatus)
async def set_signals(body: TelegramSignalSettings, principal: Writer, ctx: Ctx) -> TelegramStatus:
    """Choose the portfolio that Cornix-style signals posted to the bot trade, and their size
    (percent of equity); `portfolio_id: null` stops trading from Telegram."""
    async with ctx.transaction() as uow:
        binding = await service.set_signal_source(
            uow, principal, body.portfolio_id, body.size_percent
        )
        return TelegramStatus.model_validate(service.status_view(binding))


@router.post("/webhook/tg", response_model=TelegramAccepted)
async def telegram_update(request: Request, ctx: Ctx) -> TelegramAccepted:
    """The bot's webhook (setWebhook with secret_token): checked, stored, answered at once and
    processed in the background; a re-sent update_id is not processed twice."""
    settings = ctx.settings
    secret = settings.telegram_webhook_secret
    if not secret or not settings.telegram_bot_token:
        raise NotFound("Telegram is not configured on this server.", code="telegram_not_configured")
    if not constant_equal(request.headers.get(SECRET_HEADER, ""), secret):
        raise Unauthorized(
            "Missing or wrong X-Telegram-Bot-Api-Secret-Token.", code="invalid_telegram_secret"
        )
    vouch(request)
    raw = await request.body()
    try:
        update = orjson.loads(raw)
    except orjson.JSONDecodeError:
        update = None
    update_id = update.get("update_id") if isinstance(update, dict) else None
    if not isinstance(update_id, int) or isinstance(update_id, bool) or not 0 <= update_id < 2**62:
        raise BadRequest(
            "An update is a JSON object with an integer update_id.", code="invalid_update"
        )
    try:
        async with ctx.transaction() as uow:
            if await uow.session.get(TelegramUpdate, update_id) is not None:
                return TelegramAccepted(duplicate=True)
            uow.session.add(
                TelegramUpdate(
                    update_id=update_id, body=raw.decode(errors="replace").replace("\x00", "\ufffd")
                )
            )
    except IntegrityError:  # the same update, received twice at once
        return TelegramAccepted(duplicate=True)
    await request.app.state.jobs.enqueue(jobs.PROCESS_UPDATE, update_id=update_id)
    return TelegramAccepted(duplicate=False)
