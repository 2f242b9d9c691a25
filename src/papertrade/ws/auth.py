"""Who is on a socket: a native API key (Bearer header or auth message) or the session cookie.

Webhook tokens and compatible-interface keys are different credentials and never resolve here.
"""

from collections.abc import Iterable

from sqlalchemy import select
from starlette.websockets import WebSocket

from papertrade.auth import v1 as v1_auth
from papertrade.auth.cookies import SESSION_COOKIE
from papertrade.auth.principal import Principal
from papertrade.context import AppContext
from papertrade.errors import Forbidden, Unauthorized
from papertrade.kit.security import token_hash
from papertrade.kit.time import now_ms
from papertrade.models import ApiKey, Portfolio, UserSession

CHUNK = 500


async def principal_from_key(ctx: AppContext, key: str) -> Principal:
    """The principal of a live native API key, or Unauthorized (the same rule as /v1)."""
    return await v1_auth.principal_from_key(ctx, key, surface="The WebSocket")


async def principal_from_upgrade(ctx: AppContext, websocket: WebSocket) -> Principal | None:
    """Credentials sent with the upgrade request; None when there are none (auth message next)."""
    authorization = websocket.headers.get("authorization")
    if authorization is not None:
        scheme, _, token = authorization.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise Unauthorized(
                "Authorization must be 'Bearer <API_KEY>'.", code="invalid_authorization"
            )
        return await principal_from_key(ctx, token)
    cookie = websocket.cookies.get(SESSION_COOKIE)
    if not cookie:
        return None
    # A browser always sends Origin on a WebSocket: refuse pages of other sites riding the cookie.
    origin = websocket.headers.get("origin")
    if origin is not None and origin.rstrip("/") not in ctx.settings.origins():
        raise Forbidden(
            "This origin may not open a WebSocket with the session cookie.",
            code="origin_not_allowed",
        )
    async with ctx.db.reader() as session:
        row = await session.scalar(
            select(UserSession).where(UserSession.token_hash == token_hash(cookie))
        )
    if row is None or row.revoked_at is not None or row.expires_at <= now_ms():
        raise Unauthorized("The session has ended; sign in again.", code="session_expired")
    return Principal(kind="session", user_id=row.user_id, credential_id=row.id)


def _chunks(ids: Iterable[int]) -> Iterable[list[int]]:
    items = sorted(ids)
    for start in range(0, len(items), CHUNK):
        yield items[start : start + CHUNK]


async def still_valid(
    ctx: AppContext, key_ids: set[int], session_ids: set[int], portfolio_ids: set[int]
) -> tuple[set[int], set[int], set[int]]:
    """The API keys, sessions and portfolios among these that are still live."""
    now = now_ms()
    keys: set[int] = set()
    sessions: set[int] = set()
    portfolios: set[int] = set()
    async with ctx.db.reader() as session:
        for chunk in _chunks(key_ids):
            keys.update(
                await session.scalars(
                    select(ApiKey.id).where(ApiKey.id.in_(chunk), ApiKey.revoked_at.is_(None))
                )
            )
        for chunk in _chunks(session_ids):
            sessions.update(
                await session.scalars(
                    select(UserSession.id).where(
                        UserSession.id.in_(chunk),
                        UserSession.revoked_at.is_(None),
                        UserSession.expires_at > now,
                    )
                )
            )
        for chunk in _chunks(portfolio_ids):
            portfolios.update(
                await session.scalars(
                    select(Portfolio.id).where(
                        Portfolio.id.in_(chunk), Portfolio.deleted_at.is_(None)
                    )
                )
            )
    return keys, sessions, portfolios
