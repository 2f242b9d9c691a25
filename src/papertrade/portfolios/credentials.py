"""Compatible-interface key pairs and webhook tokens bound to one portfolio."""

from collections.abc import Sequence

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from papertrade.auth.events import CredentialsRevoked
from papertrade.errors import NotFound
from papertrade.kit.security import SecretCipher, new_hex_key, new_token, token_hash
from papertrade.kit.time import now_ms
from papertrade.models import CompatKey, WebhookToken
from papertrade.tiers import limits
from papertrade.uow import AsyncWork


async def create_compat_key(
    session: AsyncSession, cipher: SecretCipher, portfolio_id: int, note: str
) -> tuple[CompatKey, str, str]:
    """A key pair in Binance's format; returns (row, api_key, api_secret) — the secret once."""
    api_key, api_secret = new_hex_key(), new_hex_key()
    row = CompatKey(
        portfolio_id=portfolio_id,
        key_hash=token_hash(api_key),
        prefix=api_key[:8],
        secret_encrypted=cipher.encrypt(api_secret),
        note=note,
    )
    session.add(row)
    await session.flush()
    return row, api_key, api_secret


async def list_compat_keys(session: AsyncSession, portfolio_id: int) -> Sequence[CompatKey]:
    result = await session.scalars(
        select(CompatKey)
        .where(CompatKey.portfolio_id == portfolio_id)
        .order_by(CompatKey.id.desc())
    )
    return result.all()


async def revoke_compat_key(uow: AsyncWork, portfolio_id: int, key_id: int) -> CompatKey:
    row = await uow.session.get(CompatKey, key_id)
    if row is None or row.portfolio_id != portfolio_id:
        raise NotFound("API key not found.", code="api_key_not_found")
    if row.revoked_at is None:
        row.revoked_at = uow.now()
        uow.emit(CredentialsRevoked())
    return row


async def create_webhook_token(
    session: AsyncSession, portfolio_id: int, *, owner_id: int, enforce_tier: bool = True
) -> tuple[WebhookToken, str]:
    """A new token for the portfolio; refused past its owner's tier limit (docs/tiers.md)."""
    if enforce_tier:
        await limits.check_webhook_tokens(session, owner_id, now_ms())
    token = new_token("whk_")
    row = WebhookToken(portfolio_id=portfolio_id, token_hash=token_hash(token), prefix=token[:10])
    session.add(row)
    await session.flush()
    return row, token


async def list_webhook_tokens(session: AsyncSession, portfolio_id: int) -> Sequence[WebhookToken]:
    result = await session.scalars(
        select(WebhookToken)
        .where(WebhookToken.portfolio_id == portfolio_id)
        .order_by(WebhookToken.id.desc())
    )
    return result.all()


async def revoke_webhook_token(
    session: AsyncSession, portfolio_id: int, token_id: int
) -> WebhookToken:
    row = await session.get(WebhookToken, token_id)
    if row is None or row.portfolio_id != portfolio_id:
        raise NotFound("Webhook token not found.", code="webhook_token_not_found")
    if row.revoked_at is None:
        row.revoked_at = now_ms()
    return row


async def revoke_all(uow: AsyncWork, portfolio_id: int) -> None:
    now = uow.now()
    uow.emit(CredentialsRevoked())
    for model in (CompatKey, WebhookToken):
        await uow.session.execute(
            update(model)
            .where(model.portfolio_id == portfolio_id, model.revoked_at.is_(None))
            .values(revoked_at=now)
        )
