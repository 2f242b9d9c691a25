"""Authentication for /v1: the web session cookie (with CSRF) or a native API key (Bearer)."""

from dataclasses import dataclass
from typing import Annotated
from urllib.parse import urlsplit

from fastapi import Depends, Request
from sqlalchemy import select, update

from papertrade.auth.cookies import CSRF_COOKIE, CSRF_HEADER, SESSION_COOKIE
from papertrade.auth.credcache import GENERATION_KEY
from papertrade.auth.principal import Principal
from papertrade.context import AppContext, get_context
from papertrade.errors import Forbidden, RateLimited, Unauthorized
from papertrade.kit import ratelimit
from papertrade.kit.ratelimit import Charge, Usage
from papertrade.kit.security import constant_equal, token_hash
from papertrade.kit.time import now_ms
from papertrade.models import ApiKey, Membership, UserSession
from papertrade.tiers import limits as tier_limits
from papertrade.tiers.table import FREE

SAFE_METHODS = {"GET", "HEAD", "OPTIONS"}
LAST_USED_RESOLUTION_MS = 60_000
# Keys in the request's scope["state"]: whether a credential was accepted or refused.
VOUCHED = "credential_vouched"
REFUSED = "credential_refused"


@dataclass(slots=True)
class NativeKey:
    """What a request needs of a live native API key (cached; see auth/credcache.py)."""

    id: int
    user_id: int
    scope: str
    last_used_at: int | None
    tier_rate_per_min: int = FREE.api_requests_per_min  # the paid tier's, until tier_until
    tier_until: int = 0


async def principal_from_key(ctx: AppContext, token: str, *, surface: str = "/v1") -> Principal:
    """The principal of a live native API key (/v1 and the WebSocket), or Unauthorized."""
    token = token.strip()
    key = None
    if token and len(token) <= 200:
        key_hash = token_hash(token)

        async def load() -> NativeKey | None:
            async with ctx.db.reader() as session:
                row = await session.scalar(
                    select(ApiKey).where(ApiKey.key_hash == key_hash, ApiKey.revoked_at.is_(None))
                )
                if row is None:
                    return None
                paid = await tier_limits.membership(session, row.user_id)
            tier = tier_limits.effective(paid, now_ms())
            until = paid.paid_until if paid is not None and tier is not FREE else 0
            return NativeKey(
                row.id, row.user_id, row.scope, row.last_used_at, tier.api_requests_per_min, until
            )

        key = await ctx.credentials.get("native", key_hash, load)
    if key is None:
        raise Unauthorized(
            f"Invalid or revoked API key. {surface} accepts native API keys created under "
            "Settings, API Keys (not webhook tokens or /fapi keys).",
            code="invalid_api_key",
        )
    await _note_use(ctx, key)
    return _principal_of(ctx, key)


async def _note_use(ctx: AppContext, key: NativeKey) -> None:
    """Record when the key was last used (at most once a minute: it is shown, not audited)."""
    now = now_ms()
    if key.last_used_at is None or now - key.last_used_at > LAST_USED_RESOLUTION_MS:
        async with ctx.db.unit_of_work() as session:
            await session.execute(
                update(ApiKey).where(ApiKey.id == key.id).values(last_used_at=now)
            )
        key.last_used_at = now


def _principal_of(ctx: AppContext, key: NativeKey) -> Principal:
    tier_rate = None
    if ctx.settings.tiers_enforced:  # a paid period that ended falls back to the free tier's
        if now_ms() < key.tier_until:
            tier_rate = key.tier_rate_per_min
        else:
            tier_rate = FREE.api_requests_per_min
    return Principal(
        kind="api_key",
        user_id=key.user_id,
        credential_id=key.id,
        scope="write" if key.scope == "write" else "read",
        tier_rate_per_min=tier_rate,
    )


async def session_principal(ctx: AppContext, request: Request) -> tuple[Principal, str] | None:
    """The principal of a valid session cookie and its CSRF token, or None."""
    token = request.cookies.get(SESSION_COOKIE)
    if not token:
        return None
    async with ctx.db.reader() as session:
        found = (
            await session.execute(
                select(UserSession, Membership)
                .outerjoin(Membership, Membership.user_id == UserSession.user_id)
                .where(UserSession.token_hash == token_hash(token))
            )
        ).first()
    now = now_ms()
    if found is None:
        return None
    row, paid = found
    if row.revoked_at is not None or row.expires_at <= now:
        return None
    tier_rate = None
    if ctx.settings.tiers_enforced:  # read with the session, so a payment applies at once
        tier_rate = tier_limits.effective(paid, now).session_requests_per_min
    principal = Principal(
        kind="session", user_id=row.user_id, credential_id=row.id, tier_rate_per_min=tier_rate
    )
    return principal, row.csrf_token


def check_csrf(ctx: AppContext, request: Request, expected: str) -> None:
    """Double-submit check plus an allowed Origin (or Referer) for cookie-authenticated writes."""
    header = request.headers.get(CSRF_HEADER, "")
    cookie = request.cookies.get(CSRF_COOKIE, "")
    if not header or not constant_equal(header, cookie) or not constant_equal(header, expected):
        raise Forbidden(
            "Missing or wrong CSRF token: send the csrf_token cookie's value in X-CSRF-Token.",
            code="csrf_failed",
        )
    origin = request.headers.get("origin")
    if origin is None:
        referer = request.headers.get("referer")
        if referer:
            parts = urlsplit(referer)
            origin = f"{parts.scheme}://{parts.netloc}"
    if origin is None or origin.rstrip("/") not in ctx.settings.origins():
        raise Forbidden("Request origin is not allowed.", code="csrf_failed")


def _request_limit(ctx: AppContext, principal: Principal) -> int:
    """The credential's requests per minute: its kind's, lowered by the user's tier."""
    limits = {
        "session": ctx.settings.rate_limit_session_per_min,
        "api_key": ctx.settings.rate_limit_api_key_per_min,
        "webhook": ctx.settings.rate_limit_webhook_per_min,
        "compat": ctx.settings.rate_limit_compat_weight_per_min,
    }
    limit = limits[principal.kind]
    if principal.tier_rate_per_min is not None:  # by the user's tier (docs/tiers.md)
        limit = min(limit, principal.tier_rate_per_min)
    return limit


async def charge_rate_limit(ctx: AppContext, principal: Principal) -> None:
    """Charge one request to the credential's own budget; 429 with Retry-After when spent."""
    limit = _request_limit(ctx, principal)
    _allow(await ctx.limiter.hit(principal.rate_key, limit, 60), limit)


def _allow(usage: Usage, limit: int) -> None:
    if not usage.allowed:
        raise RateLimited(
            f"Rate limit of {limit} requests per minute exceeded for this "
            f"credential; retry in {usage.retry_after} s.",
            retry_after=usage.retry_after,
        )


# The dependencies below take only the request (the context is on the app): FastAPI resolves each
# nested dependency with a cost comparable to a cheap endpoint's own work.


def vouch(request: Request) -> None:
    """Record that a credential was accepted for this request: it is charged to that credential,
    not to the per-address budget of unauthenticated traffic (auth/ip_budget.py)."""
    request.scope.setdefault("state", {})[VOUCHED] = True


def refuse(request: Request) -> None:
    """Record that the request's credential was refused: the address pays for it."""
    request.scope.setdefault("state", {})[REFUSED] = True


async def _resolve(ctx: AppContext, request: Request) -> Principal:
    authorization = request.headers.get("authorization")
    if authorization is not None:
        scheme, _, token = authorization.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise Unauthorized(
                "Authorization must be 'Bearer <API_KEY>'.", code="invalid_authorization"
            )
        principal = await principal_from_key(ctx, token)
        vouch(request)
        return principal
    found = await session_principal(ctx, request)
    if found is None:
        raise Unauthorized(
            "Sign in, or send a native API key as 'Authorization: Bearer <API_KEY>'.",
            code="unauthenticated",
        )
    principal, csrf = found
    vouch(request)
    if request.method not in SAFE_METHODS:
        check_csrf(ctx, request, csrf)
    return principal


async def _charged_cached_key(ctx: AppContext, request: Request) -> Principal | None:
    """A cached API key's caller, charged: one Redis round trip both charges the request and
    reads the credential cache's generation, which confirms the key is still live. None when
    the key is not cached or could not be confirmed (the full path then decides)."""
    authorization = request.headers.get("authorization")
    if authorization is None or authorization[:7].lower() != "bearer ":
        return None
    token = authorization[7:].strip()
    if not token or len(token) > 200:
        return None
    found = ctx.credentials.unconfirmed("native", token_hash(token))
    if found is None:
        return None
    key, epoch = found
    principal = _principal_of(ctx, key)
    limit = _request_limit(ctx, principal)
    charge = Charge(principal.rate_key, limit, 60)
    charged_at = ratelimit.clock()  # the limiter's own clock: give_back finds the same window
    (usage,), generation = await ctx.limiter.hit_all_and_read([charge], GENERATION_KEY)
    if not ctx.credentials.confirm(generation, epoch):
        if usage.allowed:  # the full path charges again, so this charge is given back
            await ctx.limiter.give_back([charge], charged_at)
        return None
    vouch(request)
    _allow(usage, limit)
    await _note_use(ctx, key)
    return principal


async def current_principal(request: Request) -> Principal:
    """Resolve a /v1 caller from `Authorization: Bearer` or the session cookie."""
    ctx: AppContext = request.app.state.ctx
    principal = await _charged_cached_key(ctx, request)
    if principal is not None:
        return principal
    try:
        principal = await _resolve(ctx, request)
    except Unauthorized:
        refuse(request)
        raise
    await charge_rate_limit(ctx, principal)
    return principal


async def is_known_caller(request: Request) -> bool:
    """Whether the credential sent with a request is live, for endpoints that never look at it
    (public reads): checked without charging anything."""
    ctx: AppContext = request.app.state.ctx
    authorization = request.headers.get("authorization")
    if authorization is None:
        return await session_principal(ctx, request) is not None
    scheme, _, token = authorization.partition(" ")
    if scheme.lower() != "bearer":
        return False
    try:
        await principal_from_key(ctx, token)
    except Unauthorized:
        return False
    return True


async def writer_principal(request: Request) -> Principal:
    """A caller allowed to change state (session cookie or write-scoped key)."""
    principal = await current_principal(request)
    if not principal.can_write:
        raise Forbidden(
            "This API key is read-only; create a key with scope 'write' to change state.",
            code="read_only_key",
        )
    return principal


async def session_only(request: Request) -> Principal:
    """Credential management is done in the web application, with the session cookie only."""
    principal = await current_principal(request)
    if principal.kind != "session":
        raise Forbidden(
            "Credentials are managed in the web application (session cookie) only.",
            code="session_required",
        )
    return principal


Caller = Annotated[Principal, Depends(current_principal)]
Writer = Annotated[Principal, Depends(writer_principal)]
WebUser = Annotated[Principal, Depends(session_only)]
Ctx = Annotated[AppContext, Depends(get_context)]


async def optional_principal(request: Request) -> Principal | None:
    """The caller when credentials are sent, None for anonymous readers of public pages."""
    if "authorization" in request.headers:
        return await current_principal(request)
    found = await session_principal(request.app.state.ctx, request)
    if found is None:
        refuse(request)  # no cookie, or a dead one: an anonymous reader
        return None
    vouch(request)
    return found[0]


MaybeCaller = Annotated[Principal | None, Depends(optional_principal)]
