"""/v1/tg/*: binding the account to Telegram; /v1/webhook/tg: the bot's updates."""

from typing import Annotated

import orjson
import segno
from fastapi import APIRouter, Query, Request
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from papertrade.auth.v1 import Caller, Ctx, WebUser, Writer, vouch
from papertrade.errors import BadRequest, NotFound, Unauthorized
from papertrade.kit.ids import Id
from papertrade.kit.security import constant_equal
from papertrade.models import TelegramMessage, TelegramUpdate
from papertrade.tg import channels, jobs, service, updates
from papertrade.tg.schemas import (
    TelegramAccepted,
    TelegramChannelRead,
    TelegramChannelSettings,
    TelegramLinkCreated,
    TelegramMessagePage,
    TelegramMessageRead,
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


@router.get("/tg/channels", response_model=list[TelegramChannelRead])
async def list_channels(principal: Caller, ctx: Ctx) -> list[TelegramChannelRead]:
    """Channels connected as signal sources (the bot was made an administrator by you)."""
    async with ctx.db.reader() as session:
        rows = await channels.channels_of(session, principal.user_id)
        return [TelegramChannelRead.model_validate(channels.channel_view(r)) for r in rows]


@router.put("/tg/channels/{chat_id}", response_model=TelegramChannelRead)
async def configure_channel(
    chat_id: int, body: TelegramChannelSettings, principal: Writer, ctx: Ctx
) -> TelegramChannelRead:
    """Choose the portfolio a connected channel's signals trade (`null`: stop) and their size."""
    _check_chat_id(chat_id)
    async with ctx.transaction() as uow:
        row = await channels.configure(
            uow, principal, chat_id, body.portfolio_id, body.size_percent
        )
        return TelegramChannelRead.model_validate(channels.channel_view(row))


@router.delete("/tg/channels/{chat_id}", response_model=TelegramChannelRead)
async def disconnect_channel(chat_id: int, principal: Writer, ctx: Ctx) -> TelegramChannelRead:
    """Stop reading the channel (removing the bot from it does the same)."""
    _check_chat_id(chat_id)
    async with ctx.transaction() as uow:
        row = await channels.disconnect(uow, principal.user_id, chat_id)
        return TelegramChannelRead.model_validate(channels.channel_view(row))


def _check_chat_id(chat_id: int) -> None:
    if not -(2**62) <= chat_id <= 2**62:
        raise NotFound("No connected channel has this chat id.", code="telegram_channel_not_found")


@router.get("/tg/messages", response_model=TelegramMessagePage)
async def list_messages(
    principal: Caller,
    ctx: Ctx,
    before_id: Id | None = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
) -> TelegramMessagePage:
    """What the bot sent you (notifications and replies), newest first, with each message's
    delivery status: `interrupted` ones may or may not have arrived and are never re-sent."""
    statement = select(TelegramMessage).where(TelegramMessage.user_id == principal.user_id)
    if before_id is not None:
        statement = statement.where(TelegramMessage.id < before_id)
    async with ctx.db.reader() as session:
        rows = await session.scalars(statement.order_by(TelegramMessage.id.desc()).limit(limit))
        found = [TelegramMessageRead.model_validate(r) for r in rows]
    return TelegramMessagePage(
        messages=found, next_before_id=found[-1].id if len(found) == limit else None
    )


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
                    update_id=update_id,
                    body=raw.decode(errors="replace").replace("\x00", "\ufffd"),
                    chat_id=updates.chat_of(update),
                )
            )
    except IntegrityError:  # the same update, received twice at once
        return TelegramAccepted(duplicate=True)
    await request.app.state.jobs.enqueue(jobs.PROCESS_UPDATE, update_id=update_id)
    return TelegramAccepted(duplicate=False)
