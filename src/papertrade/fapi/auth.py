"""Binance request signing, compat-key resolution, rate limits and replay refusal.

Signature (contract §1.3): lowercase hex HMAC-SHA256 keyed with the API secret over the raw query
string concatenated with the raw body, each with its `signature` parameter removed — verified over
the bytes as received, never over re-encoded parameters.
"""

import hashlib
import hmac
import re
from dataclasses import dataclass

from sqlalchemy import select, update
from starlette.requests import Request

from papertrade.auth.client_ip import client_key
from papertrade.auth.credcache import GENERATION_KEY
from papertrade.auth.principal import Principal
from papertrade.context import AppContext
from papertrade.fapi.errors import FapiError, mandatory
from papertrade.fapi.params import Params
from papertrade.kit import ratelimit
from papertrade.kit.ratelimit import Charge, Usage
from papertrade.kit.security import token_hash
from papertrade.kit.time import now_ms
from papertrade.models import CompatKey, Membership, Portfolio
from papertrade.tiers.table import FREE, TIERS, Tier

API_KEY_HEADERS = ("x-mbx-apikey", "x-ext-apikey")
API_KEY_RE = re.compile(r"^[A-Za-z0-9_\-]{1,128}$")
DEFAULT_RECV_WINDOW = 5000
MAX_RECV_WINDOW = 60_000
MAX_AHEAD_MS = 1000
LAST_USED_RESOLUTION_MS = 60_000
INVALID_KEY = "Invalid API-key, IP, or permissions for action."


@dataclass
class Meter:
    """What this request was charged; becomes the X-MBX-* response headers."""

    weight: int | None = None
    orders_10s: int | None = None
    orders_1m: int | None = None

    def headers(self) -> dict[str, str]:
        found = {"X-MBX-USED-WEIGHT-1M": str(self.weight or 0)}
        if self.orders_10s is not None:
            found["X-MBX-ORDER-COUNT-10S"] = str(self.orders_10s)
        if self.orders_1m is not None:
            found["X-MBX-ORDER-COUNT-1M"] = str(self.orders_1m)
        return found


@dataclass(slots=True)
class KeyRow:
    """The parts of a compat key and its portfolio that a signed request needs."""

    id: int
    portfolio_id: int
    user_id: int
    secret_encrypted: str
    last_used_at: int | None
    paid_tier: str | None = None  # the owner's paid tier, in force until paid_until
    paid_until: int | None = None

    def tier(self, now: int) -> Tier:
        """The owner's tier now: a paid period that ended falls back to free."""
        if self.paid_tier is None or self.paid_until is None or self.paid_until <= now:
            return FREE
        return TIERS.get(self.paid_tier, FREE)


@dataclass
class Caller:
    """The resolved compat key of a signed request."""

    principal: Principal
    portfolio_id: int


def client_ip(request: Request) -> str:
    """The address unsigned and badly signed requests are weighed against (auth/client_ip.py)."""
    ctx: AppContext = request.app.state.ctx
    return client_key(request.scope, ctx.settings)


def budgets(ctx: AppContext, tier: Tier | None) -> tuple[int, int, int]:
    """Request weight per minute and orders per 10 s and per minute: the settings, lowered to the
    key owner's tier when tiers are enforced (docs/tiers.md). Unsigned requests (an IP) get the
    settings."""
    settings = ctx.settings
    weight = settings.rate_limit_compat_weight_per_min
    per_10s = settings.rate_limit_compat_orders_per_10s
    per_min = settings.rate_limit_compat_orders_per_min
    if tier is not None and settings.tiers_enforced:
        weight = min(weight, tier.fapi_weight_per_min)
        per_10s = min(per_10s, tier.fapi_orders_per_10s)
        per_min = min(per_min, tier.fapi_orders_per_min)
    return weight, per_10s, per_min


def _charges(
    ctx: AppContext,
    subject: str,
    weight: int,
    orders_of: str | None,
    tier: Tier | None,
    orders: int = 1,
) -> list[Charge]:
    weight_limit, per_10s, per_min = budgets(ctx, tier)
    charges = [Charge(f"fapi-weight:{subject}", weight_limit, 60, weight)]
    if orders_of is not None and orders > 0:
        charges += [
            Charge(f"fapi-orders:{orders_of}:10", per_10s, 10, orders),
            Charge(f"fapi-orders:{orders_of}:60", per_min, 60, orders),
        ]
    return charges


async def charge(
    ctx: AppContext,
    subject: str,
    weight: int,
    meter: Meter,
    orders_of: str | None = None,
    tier: Tier | None = None,
    orders: int = 1,
) -> None:
    """Charge request weight to `subject` (a compat key or an IP) and, for new orders, `orders`
    against the `orders_of` key's 10-second and 1-minute order limits: all in one call to the
    limiter (one Redis round trip). The first budget spent refuses the request with 429: -1003
    for weight, -1015 for orders. A key's budgets are its owner's tier's (`tier`)."""
    charges = _charges(ctx, subject, weight, orders_of, tier, orders)
    _settle(charges, await ctx.limiter.hit_all(charges), meter)


def _settle(charges: list[Charge], usages: list[Usage], meter: Meter) -> None:
    """Note what was charged on the meter; 429 when a budget was spent."""
    meter.weight = usages[0].used
    if len(usages) > 1:
        meter.orders_10s = usages[1].used
    if len(usages) > 2:
        meter.orders_1m = usages[2].used
    last = usages[-1]
    if last.allowed:
        return
    limit = charges[len(usages) - 1].limit
    retry = {"Retry-After": str(last.retry_after)}
    if len(usages) == 1:
        raise FapiError(
            429,
            -1003,
            f"Too many requests; current limit is {limit} request weight per 1 MINUTE. "
            "Please use the websocket for live updates to avoid polling the API.",
            retry,
        )
    label = "10 SECOND" if len(usages) == 2 else "1 MINUTE"
    raise FapiError(
        429, -1015, f"Too many new orders; current limit is {limit} orders per {label}.", retry
    )


def signed_message(query: bytes, body: bytes) -> bytes:
    """The raw query plus the raw body, each without its `signature` parameter."""

    def strip(raw: bytes) -> bytes:
        if b"signature=" not in raw:
            return raw
        return b"&".join(p for p in raw.split(b"&") if not p.startswith(b"signature="))

    return strip(query) + strip(body)


def _api_key(request: Request) -> str:
    for name in API_KEY_HEADERS:
        value = request.headers.get(name, "").strip()
        if value:
            if not API_KEY_RE.match(value):
                break
            return value
    raise FapiError(401, -2014, "API-key format invalid.")


async def tier_of_key_header(ctx: AppContext, request: Request) -> Tier | None:
    """The tier of the key an unsigned request carries (python-binance sends its key on every
    request), or None: no key, or one that is malformed, unknown or revoked. Never refuses."""
    try:
        key = await _load_key(ctx, _api_key(request))
    except FapiError:
        return None
    return key.tier(now_ms())


async def _load_key(ctx: AppContext, api_key: str) -> KeyRow:
    key_hash = token_hash(api_key)

    async def load() -> KeyRow | None:
        async with ctx.db.reader() as session:
            row = (
                await session.execute(
                    select(
                        CompatKey.id,
                        CompatKey.portfolio_id,
                        Portfolio.user_id,
                        CompatKey.secret_encrypted,
                        CompatKey.last_used_at,
                        Membership.tier,
                        Membership.paid_until,
                    )
                    .join(Portfolio, Portfolio.id == CompatKey.portfolio_id)
                    .outerjoin(Membership, Membership.user_id == Portfolio.user_id)
                    .where(
                        CompatKey.key_hash == key_hash,
                        CompatKey.revoked_at.is_(None),
                        Portfolio.deleted_at.is_(None),
                    )
                )
            ).first()
        return KeyRow(*row) if row is not None else None

    key = await ctx.credentials.get("compat", key_hash, load)
    if key is None:
        raise FapiError(401, -2015, INVALID_KEY)
    return key


def _secret(ctx: AppContext, encrypted: str) -> str:
    return ctx.cipher.decrypt(encrypted)


def _check_timestamp(params: Params) -> tuple[int, int]:
    timestamp = params.integer("timestamp", required=True, low=0)
    window = params.integer("recvWindow")
    if window is None:
        window = DEFAULT_RECV_WINDOW
    elif not 0 < window <= MAX_RECV_WINDOW:
        raise FapiError(400, -1131, f"recvWindow must be less than {MAX_RECV_WINDOW}.")
    assert timestamp is not None
    server = now_ms()
    if timestamp >= server + MAX_AHEAD_MS or server - timestamp > window:
        raise FapiError(400, -1021, "Timestamp for this request is outside of the recvWindow.")
    return timestamp, window


def _check_signature(params: Params, secret: str, query: bytes, body: bytes) -> None:
    signature = params.values.get("signature", "")
    if not signature:
        raise mandatory("signature")
    expected = hmac.new(secret.encode(), signed_message(query, body), hashlib.sha256).hexdigest()
    if not hmac.compare_digest(expected.encode(), signature.lower().encode()):
        raise FapiError(400, -1022, "Signature for this request is not valid.")


async def _refuse_replay(
    ctx: AppContext, key_id: int, signature: str, timestamp: int, window: int
) -> None:
    ttl = max(1000, timestamp + window - now_ms() + MAX_AHEAD_MS)
    if not await ctx.replays.first_time(f"{key_id}:{signature.lower()}", ttl):
        raise FapiError(
            400,
            -1021,
            "This exact signed request was already received inside its recvWindow; "
            "replays are refused. Sign a new request with a fresh timestamp.",
        )


async def _touch(ctx: AppContext, key: KeyRow) -> None:
    now = now_ms()
    if key.last_used_at is None or now - key.last_used_at > LAST_USED_RESOLUTION_MS:
        async with ctx.db.unit_of_work() as session:
            await session.execute(
                update(CompatKey).where(CompatKey.id == key.id).values(last_used_at=now)
            )
        key.last_used_at = now


async def authenticate(
    ctx: AppContext,
    request: Request,
    params: Params,
    query: bytes,
    body: bytes,
    weight: int,
    meter: Meter,
    *,
    orders: int = 0,
) -> Caller:
    """Resolve the compat key, check time and signature, charge its weight (and, for new orders,
    the key's order limits `orders` times), refuse replays."""
    try:
        api_key = _api_key(request)
    except FapiError:
        await charge(ctx, f"ip:{client_ip(request)}", weight, meter)
        raise
    cached = await _cached_caller(ctx, api_key, params, query, body, weight, meter, orders)
    if cached is not None:
        caller, key, timestamp, window = cached
    else:
        try:
            key = await _load_key(ctx, api_key)
        except FapiError:
            await charge(ctx, f"ip:{client_ip(request)}", weight, meter)
            raise
        tier = key.tier(now_ms())
        caller = Caller(_principal(key), key.portfolio_id)
        rate_key = caller.principal.rate_key
        try:
            timestamp, window = _check_timestamp(params)
            _check_signature(params, _secret(ctx, key.secret_encrypted), query, body)
        except FapiError:
            await charge(ctx, rate_key, weight, meter, tier=tier)  # a spent budget first
            raise
        await charge(ctx, rate_key, weight, meter, rate_key if orders else None, tier, orders)
    if request.method != "GET":
        await _refuse_replay(ctx, key.id, params.values["signature"], timestamp, window)
    await _touch(ctx, key)
    return caller


def _principal(key: KeyRow) -> Principal:
    return Principal(
        kind="compat",
        user_id=key.user_id,
        credential_id=key.id,
        scope="write",
        portfolio_id=key.portfolio_id,
    )


async def _cached_caller(
    ctx: AppContext,
    api_key: str,
    params: Params,
    query: bytes,
    body: bytes,
    weight: int,
    meter: Meter,
    orders: int,
) -> tuple[Caller, KeyRow, int, int] | None:
    """A well-signed request of a cached key, charged: one Redis round trip charges it and reads
    the credential cache's generation, which confirms the key is still live (as on /v1). None
    when the key is not cached, the request is refused for its time or signature, or the key
    could not be confirmed: the full path then decides, and charges, as before."""
    found = ctx.credentials.unconfirmed("compat", token_hash(api_key))
    if found is None:
        return None
    key, epoch = found
    try:
        timestamp, window = _check_timestamp(params)
        _check_signature(params, _secret(ctx, key.secret_encrypted), query, body)
    except FapiError:
        return None
    caller = Caller(_principal(key), key.portfolio_id)
    rate_key = caller.principal.rate_key
    charges = _charges(
        ctx, rate_key, weight, rate_key if orders else None, key.tier(now_ms()), orders
    )
    charged_at = ratelimit.clock()  # the limiter's own clock: give_back finds the same window
    usages, generation = await ctx.limiter.hit_all_and_read(charges, GENERATION_KEY)
    if not ctx.credentials.confirm(generation, epoch):
        charged = len(usages) if usages[-1].allowed else len(usages) - 1
        if charged:  # the full path charges again
            await ctx.limiter.give_back(charges[:charged], charged_at)
        return None
    _settle(charges, usages, meter)
    return caller, key, timestamp, window
