"""Receive one alert: authenticate the token, parse, de-duplicate, check age, execute, record.

Every alert that gets past the token and the rate limit is kept in the portfolio's signal history
with its raw body, what it parsed to, the orders it made and the outcome. An executed (or
no-op) alert holds a de-duplication key so a re-send never trades twice: 24 hours when the alert
carries an `idempotency_key` or a `time`, and a short window for a bare body, which cannot tell a
re-send from the next alert of the same text (docs/webhooks.md explains the choice).
"""

import hashlib
import random
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import delete, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from papertrade.auth.principal import Principal
from papertrade.context import AppContext
from papertrade.errors import PapertradeError, RateLimited
from papertrade.kit.deployment import namespace
from papertrade.kit.security import token_hash
from papertrade.kit.time import now_ms
from papertrade.models import Portfolio, SignalDedupe, WebhookToken
from papertrade.orders.pricing import Venue
from papertrade.orders.record import AnyOrder
from papertrade.portfolios import service as portfolio_service
from papertrade.tiers import limits as tier_limits
from papertrade.trading.errors import TradingRuleError
from papertrade.webhooks import command as commands
from papertrade.webhooks.errors import (
    NotExecutable,
    PayloadTooLarge,
    SignalError,
    StaleSignal,
    WebhookNotFound,
    WebhookRevoked,
)
from papertrade.webhooks.events import SignalExecuted, SignalIgnored, SignalReceived
from papertrade.webhooks.execute import Outcome, execute
from papertrade.webhooks.parse import parse_body
from papertrade.webhooks.signals import Alert, announce, duplicate, new_signal, record

MAX_BODY_BYTES = 8 * 1024
DEDUPE_MS = 24 * 3_600_000
BARE_DEDUPE_MS = 45_000  # covers TradingView's re-sends (3 more, 5 s apart, 3 s timeouts)
FUTURE_TOLERANCE_MS = 60_000
LAST_USED_RESOLUTION_MS = 60_000


@dataclass
class Received:
    """The answer to the sender (and what the signal history keeps)."""

    signal_id: int
    status: str
    msg: str
    orders: list[AnyOrder] = field(default_factory=list)
    duplicate_of: int | None = None


async def receive(ctx: AppContext, token: str, raw: bytes, content_type: str) -> Received:
    """Handle one POST to /webhook/tv/<token>; PapertradeError (4xx) for permanent problems."""
    if len(raw) > MAX_BODY_BYTES:
        raise PayloadTooLarge(
            f"The alert body is {len(raw)} bytes; the limit is {MAX_BODY_BYTES} bytes."
        )
    # Undecodable bytes and NUL (which PostgreSQL text cannot hold) become U+FFFD.
    body = raw.decode("utf-8", "replace").replace("\x00", "\ufffd")
    body_format, parsed, cmds, invalid = _parse(ctx, body)
    row, owner, earlier, key, ttl = await _lookup(ctx, token, cmds, raw)
    await _rate_limit(ctx, row.id, owner)
    principal = Principal(
        kind="webhook",
        user_id=owner,
        credential_id=row.id,
        scope="write",
        portfolio_id=row.portfolio_id,
    )
    alert = Alert(row, principal, body, content_type[:100].replace("\x00", ""))
    alert.body_format, alert.parsed = body_format, parsed
    if invalid is not None:
        await record(ctx, alert, "invalid", invalid)
        raise invalid
    if earlier is not None:
        return await _duplicate(ctx, alert, earlier, cmds)
    now = now_ms()
    stale = _staleness(cmds, now)
    if stale is not None:
        await record(ctx, alert, "stale", stale)
        raise stale
    try:
        return await _execute(ctx, alert, cmds, key, now + ttl)
    except IntegrityError:
        earlier = await _earlier(ctx, key, now_ms())
        if earlier is None:
            raise
        return await _duplicate(ctx, alert, earlier, cmds)  # a concurrent re-send won the race
    except (PapertradeError, TradingRuleError) as exc:
        error = _as_webhook_error(exc)
        await record(ctx, alert, "rejected", error, rejected=cmds)
        raise error from exc


def _parse(
    ctx: AppContext, body: str
) -> tuple[str, Any, list[commands.Command], SignalError | None]:
    """(format, parse result to keep, commands, the error that makes the alert invalid)."""
    body_format, parsed = "text", None
    try:
        body_format, fields = parse_body(body)
        parsed = fields
        instruments = ctx.market.instruments() if ctx.market is not None else {}
        cmds = [commands.build(f, n, instruments) for n, f in enumerate(fields, 1)]
    except SignalError as exc:
        return body_format, parsed, [], exc
    return body_format, [c.as_json() for c in cmds], cmds, None


async def _lookup(
    ctx: AppContext, token: str, cmds: list[commands.Command], raw: bytes
) -> tuple[WebhookToken, int, int | None, str, int]:
    """The token's row and owner, and the signal an earlier copy of this alert made (one read)."""
    missing = WebhookNotFound(
        "No webhook has this token. Copy the URL again from the portfolio's Webhook panel.",
    )
    if not token or len(token) > 200:
        raise missing
    earlier = None
    async with ctx.db.reader() as session:
        found = (
            await session.execute(
                select(WebhookToken, Portfolio.user_id, Portfolio.deleted_at)
                .join(Portfolio, Portfolio.id == WebhookToken.portfolio_id)
                .where(WebhookToken.token_hash == token_hash(token))
            )
        ).first()
        if found is None:
            raise missing
        row, owner, deleted_at = found
        key, ttl = _dedupe_key(row.id, cmds, raw)
        if cmds and row.revoked_at is None:
            dedupe = await session.get(SignalDedupe, key)
            if dedupe is not None and dedupe.expires_at > now_ms():
                earlier = dedupe.signal_id
    if row.revoked_at is not None or deleted_at is not None:
        raise WebhookRevoked(
            "This webhook token was revoked (or its portfolio deleted); create a new webhook on "
            "the portfolio's Webhook panel and update the alert's URL."
        )
    return row, int(owner), earlier, key, ttl


async def _rate_limit(ctx: AppContext, token_id: int, owner: int) -> None:
    """Per token: the per-minute limit (lower on the owner's tier, docs/tiers.md; a token over
    the tier's count is paused) and a 3-minute burst limit like TradingView's own."""
    key = f"webhook:{namespace(ctx.settings.database_url)}:{token_id}"
    per_min = ctx.settings.rate_limit_webhook_per_min
    if ctx.settings.tiers_enforced:
        async with ctx.db.reader() as session:
            tier = await tier_limits.tier_of(session, owner, now_ms())
            await tier_limits.check_webhook_in_limit(session, owner, token_id, tier)
        per_min = min(per_min, tier.webhook_signals_per_min)
    for limit, window in (
        (per_min, 60),
        (ctx.settings.rate_limit_webhook_per_3min, 180),
    ):
        usage = await ctx.limiter.hit(key, limit, window)
        if not usage.allowed:
            raise RateLimited(
                f"This webhook accepts {limit} alerts per {window // 60} minute(s); retry in "
                f"{usage.retry_after} s or send fewer alerts.",
                retry_after=usage.retry_after,
            )


def _dedupe_key(token_id: int, cmds: list[commands.Command], raw: bytes) -> tuple[str, int]:
    keys = [c.idempotency_key for c in cmds if c.idempotency_key]
    digest = hashlib.sha256(f"{token_id}\n".encode())
    if keys:
        digest.update(b"key\n" + "\n".join(keys).encode())
        return digest.hexdigest(), DEDUPE_MS
    digest.update(b"body\n" + raw)
    timed = any(c.time_ms is not None for c in cmds)
    return digest.hexdigest(), DEDUPE_MS if timed else BARE_DEDUPE_MS


async def _earlier(ctx: AppContext, key: str, now: int) -> int | None:
    async with ctx.db.reader() as session:
        row = await session.get(SignalDedupe, key)
    return row.signal_id if row is not None and row.expires_at > now else None


def _staleness(cmds: list[commands.Command], now: int) -> StaleSignal | None:
    for cmd in cmds:
        if cmd.time_ms is None:
            continue
        age = now - cmd.time_ms
        if age > cmd.max_lag_s * 1000:
            return StaleSignal(
                f"Command {cmd.line}: the signal is {age // 1000} s old, more than max_lag "
                f"{cmd.max_lag_s} s; it was not executed. Alerts must arrive promptly (raise "
                "max_lag up to 300 s if your sender is slow)."
            )
        if age < -FUTURE_TOLERANCE_MS:
            return StaleSignal(
                f"Command {cmd.line}: the signal time is {-age // 1000} s in the future. Send UTC "
                "times ({{timenow}} is UTC) or epoch milliseconds.",
                code="signal_time_in_future",
                status_code=400,
            )
    return None


def _as_webhook_error(exc: Exception) -> PapertradeError:
    """Order-path failures as webhook answers: rule breaks are 422, transient stays 5xx."""
    if isinstance(exc, TradingRuleError):
        message = exc.message[:1].upper() + exc.message[1:]
        return NotExecutable(message if message.endswith(".") else message + ".", code=exc.code)
    assert isinstance(exc, PapertradeError)
    if exc.status_code == 400 and not isinstance(exc, SignalError):
        return NotExecutable(exc.message, code=exc.code)
    return exc


async def _execute(
    ctx: AppContext, alert: Alert, cmds: list[commands.Command], key: str, expires_at: int
) -> Received:
    async with ctx.transaction() as uow:
        session = uow.session
        # Lock the portfolio first: concurrent alerts of one portfolio then queue here, rather
        # than deadlock between the signal row's foreign-key lock and the order path's lock.
        portfolio = await portfolio_service.get_owned(
            session, alert.principal, alert.token.portfolio_id, for_update=True
        )
        signal = new_signal(alert, "received")
        session.add(signal)
        await session.flush()
        # The same alert after its window: its expired key is not a duplicate and must not
        # block the new one (expired keys are otherwise only swept now and then).
        await session.execute(
            delete(SignalDedupe).where(SignalDedupe.key == key, SignalDedupe.expires_at <= now_ms())
        )
        session.add(SignalDedupe(key=key, signal_id=signal.id, expires_at=expires_at))
        await session.flush()  # a concurrent identical alert fails here (IntegrityError)
        announce(uow, signal, SignalReceived)
        outcome: Outcome = await execute(uow, Venue.of(ctx), alert.principal, portfolio, cmds)
        signal.order_ids = [o.id for o in outcome.orders + outcome.canceled]
        signal.status = "executed" if outcome.did_something else "ignored"
        signal.msg = _summary(outcome)[:1000]
        signal.processed_at = now_ms()
        await _touch(session, alert.token)
        announce(
            uow, signal, SignalExecuted if outcome.did_something else SignalIgnored, outcome.orders
        )
        if random.random() < 0.02:  # housekeeping: forget expired keys now and then
            await session.execute(delete(SignalDedupe).where(SignalDedupe.expires_at < now_ms()))
    return Received(signal.id, signal.status, signal.msg, outcome.orders)


def _summary(outcome: Outcome) -> str:
    parts = [
        f"{o.side} {o.quantity.normalize():f} {o.symbol} {o.type} ({o.action}): {o.status}"
        for o in outcome.orders
    ]
    if outcome.canceled:
        parts.append(f"cancelled {len(outcome.canceled)} open order(s)")
    return "; ".join(parts + outcome.notes) or "Nothing to do."


async def _touch(session: AsyncSession, token: WebhookToken) -> None:
    now = now_ms()
    if token.last_used_at is None or now - token.last_used_at > LAST_USED_RESOLUTION_MS:
        await session.execute(
            update(WebhookToken).where(WebhookToken.id == token.id).values(last_used_at=now)
        )


async def _duplicate(
    ctx: AppContext, alert: Alert, earlier: int, cmds: list[commands.Command]
) -> Received:
    keyed = any(c.idempotency_key or c.time_ms is not None for c in cmds)
    signal = await duplicate(ctx, alert, earlier, keyed)
    return Received(signal.id, "duplicate", signal.msg, duplicate_of=earlier)
