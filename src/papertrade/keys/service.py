"""Create, list and revoke native API keys."""

from collections.abc import Sequence
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from papertrade.auth.events import CredentialsRevoked
from papertrade.errors import NotFound
from papertrade.keys.events import ApiKeyCreated, ApiKeyRevoked
from papertrade.kit.security import new_token, token_hash
from papertrade.models import ApiKey
from papertrade.uow import AsyncWork

KEY_PREFIX = "ptk_"


async def create(uow: AsyncWork, user_id: int, note: str, scope: str) -> tuple[ApiKey, str]:
    """A new key for the user; the plain key is returned once and only its hash is kept."""
    key = new_token(KEY_PREFIX)
    row = ApiKey(user_id=user_id, key_hash=token_hash(key), prefix=key[:12], note=note, scope=scope)
    uow.session.add(row)
    await uow.session.flush()
    uow.emit(ApiKeyCreated(**_described(row)))
    return row, key


def _described(row: ApiKey) -> dict[str, Any]:
    return {
        "user_id": row.user_id,
        "key_id": row.id,
        "prefix": row.prefix,
        "note": row.note,
        "scope": row.scope,
    }


async def list_for(session: AsyncSession, user_id: int) -> Sequence[ApiKey]:
    result = await session.scalars(
        select(ApiKey).where(ApiKey.user_id == user_id).order_by(ApiKey.id.desc())
    )
    return result.all()


async def revoke(uow: AsyncWork, user_id: int, key_id: int) -> ApiKey:
    """Revoke at once; the row stays for history."""
    row = await uow.session.get(ApiKey, key_id)
    if row is None or row.user_id != user_id:
        raise NotFound("API key not found.", code="api_key_not_found")
    if row.revoked_at is None:
        row.revoked_at = uow.now()
        uow.emit(CredentialsRevoked())
        uow.emit(ApiKeyRevoked(**_described(row)))
    return row
