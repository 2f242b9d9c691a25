"""Live accounts: registration (the key checked at the exchange, the secret encrypted), their
settings, and the ownership rules. Exchange calls happen before or after a unit of work, never
inside one."""

import json
from collections.abc import Sequence
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from papertrade.auth.principal import Principal
from papertrade.errors import BadRequest, NotFound
from papertrade.kit.security import SecretCipher
from papertrade.live import exchange
from papertrade.live.schemas import LiveAccountCreate, LiveAccountUpdate
from papertrade.models import LiveAccount, Portfolio, WebhookToken
from papertrade.portfolios import service as portfolio_service
from papertrade.strategies import service as strategy_service
from papertrade.uow import AsyncWork


class KeyRefused(BadRequest):
    code = "live_key_refused"


async def check_key(api_key: str, api_secret: str, base_url: str | None) -> exchange.KeyCheck:
    """The key must work, may trade futures, and must not be able to withdraw (where the
    exchange says so)."""
    try:
        async with exchange.connected(api_key, api_secret, base_url) as client:
            checked = await exchange.check_key(client)
    # In plain words, never with the signed request (its URL, timestamp, signature).
    except exchange.AuthenticationError as exc:
        raise KeyRefused(
            f"The exchange refused the key: {exchange.said(exc)}. Check that the key and the "
            "secret are copied whole, that futures trading is enabled for the key, and that "
            "an IP restriction on it allows this service."
        ) from exc
    except exchange.ExchangeError as exc:
        raise KeyRefused(
            f"The key could not be checked at the exchange: {exchange.said(exc)}. "
            "Try again in a minute."
        ) from exc
    if not checked.can_trade:
        raise KeyRefused("The key cannot trade futures; enable futures trading for it.")
    if checked.withdrawals == "enabled":
        raise KeyRefused("The key can withdraw funds; create one without withdrawal rights.")
    return checked


async def get_owned(
    session: AsyncSession, principal: Principal, account_id: int, *, for_update: bool = False
) -> LiveAccount:
    account = await session.get(LiveAccount, account_id, with_for_update=for_update)
    if account is None or account.user_id != principal.user_id:
        raise NotFound("Live account not found.", code="live_account_not_found")
    return account


async def list_mine(session: AsyncSession, user_id: int) -> Sequence[LiveAccount]:
    rows = await session.scalars(
        select(LiveAccount).where(LiveAccount.user_id == user_id).order_by(LiveAccount.id)
    )
    return rows.all()


SourceChoice = LiveAccountCreate | LiveAccountUpdate


def _chosen(body: SourceChoice) -> tuple[int | None, int | None, int | None] | None:
    """The source the body binds (portfolio, strategy, token ids), None when it binds none."""
    chosen = (body.source_portfolio_id, body.source_strategy_id, body.source_token_id)
    named = sum(1 for c in chosen if c is not None)
    if named > 1:
        raise BadRequest(
            "Bind one signal source: a portfolio, a strategy or a webhook token.",
            code="live_source_conflict",
        )
    return chosen if named else None


async def _check_source(
    session: AsyncSession, principal: Principal, chosen: tuple[int | None, int | None, int | None]
) -> None:
    """The source must be the caller's own (a missing one or another's is a 404)."""
    portfolio_id, strategy_id, token_id = chosen
    if portfolio_id is not None:
        await portfolio_service.get_owned(session, principal, portfolio_id)
    if strategy_id is not None:
        await strategy_service.get_owned(session, principal, strategy_id)
    if token_id is not None:
        owner = await session.scalar(
            select(Portfolio.user_id)
            .join(WebhookToken, WebhookToken.portfolio_id == Portfolio.id)
            .where(WebhookToken.id == token_id, WebhookToken.revoked_at.is_(None))
        )
        if owner != principal.user_id:
            raise NotFound("Webhook token not found.", code="webhook_token_not_found")


async def check_source(session: AsyncSession, principal: Principal, body: SourceChoice) -> None:
    chosen = _chosen(body)
    if chosen is not None:
        await _check_source(session, principal, chosen)


def _symbols(symbols: list[str]) -> str:
    cleaned = sorted({s.strip().upper() for s in symbols if s.strip()})
    if any(not (s.isascii() and s.isalnum() and len(s) <= 30) for s in cleaned):
        raise BadRequest("Symbols are exchange symbols such as BTCUSDT.", code="invalid_symbol")
    return json.dumps(cleaned)


async def create(
    uow: AsyncWork,
    principal: Principal,
    body: LiveAccountCreate,
    cipher: SecretCipher,
    checked: exchange.KeyCheck,
) -> LiveAccount:
    await check_source(uow.session, principal, body)
    account = LiveAccount(
        user_id=principal.user_id,
        exchange=body.exchange,
        label=body.label,
        api_key=body.api_key,
        api_secret_encrypted=cipher.encrypt(body.api_secret),
        withdrawals=checked.withdrawals,
        source_portfolio_id=body.source_portfolio_id,
        source_strategy_id=body.source_strategy_id,
        source_token_id=body.source_token_id,
        sizing=body.sizing,
        sizing_value=body.sizing_value,
        symbols=_symbols(body.symbols),
        max_position_notional=body.max_position_notional,
        max_daily_loss=body.max_daily_loss,
        status="active",
        kill_reason="",
        consecutive_errors=0,
        day="",
        baseline_at=uow.now(),
    )
    uow.session.add(account)
    await uow.session.flush()
    return account


async def update(
    uow: AsyncWork, principal: Principal, account: LiveAccount, body: LiveAccountUpdate
) -> None:
    chosen = _chosen(body)
    if chosen is not None:
        if body.unbind:
            raise BadRequest("Either bind a source or unbind it.", code="live_source_conflict")
        await _check_source(uow.session, principal, chosen)
        account.source_portfolio_id, account.source_strategy_id, account.source_token_id = chosen
    if body.unbind:
        account.source_portfolio_id = account.source_strategy_id = account.source_token_id = None
    for name in ("label", "sizing", "sizing_value", "max_position_notional", "max_daily_loss"):
        value = getattr(body, name)
        if value is not None:
            setattr(account, name, value)
    if body.symbols is not None:
        account.symbols = _symbols(body.symbols)
    if body.resume:
        account.status, account.kill_reason, account.killed_at = "active", "", None
        account.consecutive_errors = 0


def view(account: LiveAccount) -> dict[str, Any]:
    return {
        "id": account.id,
        "exchange": account.exchange,
        "label": account.label,
        "api_key_hint": "…" + account.api_key[-4:],
        "withdrawals": account.withdrawals,
        "source_portfolio_id": account.source_portfolio_id,
        "source_strategy_id": account.source_strategy_id,
        "source_token_id": account.source_token_id,
        "sizing": account.sizing,
        "sizing_value": account.sizing_value,
        "symbols": json.loads(account.symbols),
        "max_position_notional": account.max_position_notional,
        "max_daily_loss": account.max_daily_loss,
        "status": account.status,
        "kill_reason": account.kill_reason,
        "killed_at": account.killed_at,
        "created_at": account.created_at,
    }
