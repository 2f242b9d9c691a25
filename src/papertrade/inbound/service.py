"""The inbound framework: store an event once and hand it to the background.

A source's endpoint checks its credential on the raw body first, then calls `store`, which
inserts the event durably (the (provider, event_id) key makes a re-delivery a no-op) and answers;
the job `inbound.process` then runs the provider's handler, once, and records its outcome.
"""

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from papertrade.context import AppContext
from papertrade.errors import NotFound, RateLimited
from papertrade.kit.deployment import namespace
from papertrade.kit.security import new_token, token_hash
from papertrade.models import InboundEvent, InboundSource
from papertrade.uow import AsyncWork

MAX_BODY_BYTES = 64 * 1024
PROVIDERS = ("finnhub",)  # those a user connects (the email provider is the deployment's)


@dataclass(frozen=True, slots=True)
class Stored:
    event_id: int  # our row's id
    duplicate: bool


async def rate_limit(ctx: AppContext, provider: str, source: int | str) -> None:
    key = f"inbound:{namespace(ctx.settings.database_url)}:{provider}:{source}"
    limit = ctx.settings.rate_limit_inbound_per_min
    usage = await ctx.limiter.hit(key, limit, 60)
    if not usage.allowed:
        raise RateLimited(
            f"This source accepts {limit} events a minute; retry in {usage.retry_after} s.",
            retry_after=usage.retry_after,
        )


async def store(
    ctx: AppContext,
    provider: str,
    event_id: str,
    event_type: str,
    body: bytes,
    *,
    source_id: int | None = None,
    user_id: int | None = None,
) -> Stored:
    """Insert the event unless it was received before."""
    text = body.decode("utf-8", "replace").replace("\x00", "\ufffd")
    try:
        async with ctx.transaction() as uow:
            earlier = await uow.session.scalar(
                select(InboundEvent.id).where(
                    InboundEvent.provider == provider, InboundEvent.event_id == event_id[:200]
                )
            )
            if earlier is not None:
                return Stored(earlier, True)
            row = InboundEvent(
                provider=provider,
                source_id=source_id,
                user_id=user_id,
                event_id=event_id[:200],
                type=event_type[:60],
                body=text,
                outcome="",
            )
            uow.session.add(row)
            await uow.session.flush()
            stored = Stored(row.id, False)
    except IntegrityError:  # the same event, received twice at once
        async with ctx.db.reader() as session:
            found = await session.scalar(
                select(InboundEvent.id).where(
                    InboundEvent.provider == provider, InboundEvent.event_id == event_id[:200]
                )
            )
        return Stored(found or 0, True)
    return stored


# -- the sources a user connects ---------------------------------------------------------------


async def create_source(
    uow: AsyncWork, user_id: int, provider: str, note: str
) -> tuple[InboundSource, str]:
    secret = new_token(nbytes=24)
    row = InboundSource(
        user_id=user_id, provider=provider, secret_hash=token_hash(secret), note=note
    )
    uow.session.add(row)
    await uow.session.flush()
    return row, secret


async def sources_of(session: AsyncSession, user_id: int) -> Sequence[InboundSource]:
    rows = await session.scalars(
        select(InboundSource).where(InboundSource.user_id == user_id).order_by(InboundSource.id)
    )
    return rows.all()


async def owned_source(session: AsyncSession, user_id: int, source_id: int) -> InboundSource:
    row = await session.get(InboundSource, source_id)
    if row is None or row.user_id != user_id:
        raise NotFound("Webhook source not found.", code="webhook_source_not_found")
    return row


async def events_of(
    session: AsyncSession, source_id: int, before_id: int | None, limit: int
) -> Sequence[InboundEvent]:
    statement = select(InboundEvent).where(InboundEvent.source_id == source_id)
    if before_id is not None:
        statement = statement.where(InboundEvent.id < before_id)
    rows = await session.scalars(statement.order_by(InboundEvent.id.desc()).limit(limit))
    return rows.all()
