"""Which tier a user is on, and the limits checked at the one place each object is created
(portfolios.service.create, portfolios.credentials.create_webhook_token, strategies.service.create,
copytrading.service.follow). Imports no service, so that those can import it."""

from collections.abc import Collection
from typing import Any

from sqlalchemy import Select, func, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import Session, aliased

from papertrade.errors import Conflict, Forbidden
from papertrade.models import (
    CopyRelation,
    Membership,
    Portfolio,
    Strategy,
    StrategyBacktest,
    User,
    WebhookToken,
)
from papertrade.tiers.table import ELITE, FREE, TIERS, Tier, next_up

# A backtest still "queued" or "running" this long after it was asked for was lost with its
# process (a crash): it no longer counts against its owner.
BACKTEST_STALE_MS = 3_600_000


class TierLimit(Forbidden):
    code = "tier_limit"


async def membership(session: AsyncSession, user_id: int) -> Membership | None:
    return await session.get(Membership, user_id)


def effective(found: Membership | None, now: int) -> Tier:
    """The tier in force: the paid one until its period ends, free after."""
    if found is None or found.paid_until <= now:
        return FREE
    return TIERS.get(found.tier, FREE)


async def tier_of(session: AsyncSession, user_id: int, now: int) -> Tier:
    return effective(await membership(session, user_id), now)


def _refuse(tier: Tier, limit: str, words: str, allowed: int) -> TierLimit:
    upgrade = next_up(tier)
    hint = (
        f" Upgrade to {upgrade.name} ({getattr(upgrade, limit)} {words}) under /v1/launch/tiers."
        if upgrade
        else ""
    )
    return TierLimit(f"The {tier.name} tier allows {allowed} {words}.{hint}")


async def _serialise(session: AsyncSession, user_id: int) -> None:
    """Lock the user's row, so that two creations at once are counted one after the other. FOR
    NO KEY UPDATE on PostgreSQL: rows that point at the user (a notification written by the
    outbox meanwhile) still go in, and cannot close a cycle with this lock."""
    await session.execute(select(User.id).where(User.id == user_id).with_for_update(key_share=True))


async def check_portfolios(session: AsyncSession, user_id: int, now: int) -> None:
    """Refuse a new portfolio past the tier's limit (deleted ones do not count). The user's row
    is locked first, so two creations at once are counted one after the other."""
    await _serialise(session, user_id)
    tier = await tier_of(session, user_id, now)
    count = await session.scalar(
        select(func.count(Portfolio.id)).where(
            Portfolio.user_id == user_id, Portfolio.deleted_at.is_(None)
        )
    )
    if (count or 0) >= tier.portfolios:
        raise _refuse(tier, "portfolios", "portfolios", tier.portfolios)


async def check_webhook_tokens(session: AsyncSession, user_id: int, now: int) -> None:
    """Refuse a new webhook token past the tier's limit (live tokens of live portfolios)."""
    await _serialise(session, user_id)
    tier = await tier_of(session, user_id, now)
    count = await session.scalar(
        select(func.count(WebhookToken.id))
        .join(Portfolio, Portfolio.id == WebhookToken.portfolio_id)
        .where(
            Portfolio.user_id == user_id,
            Portfolio.deleted_at.is_(None),
            WebhookToken.revoked_at.is_(None),
        )
    )
    if (count or 0) >= tier.webhook_tokens:
        raise _refuse(tier, "webhook_tokens", "webhook tokens", tier.webhook_tokens)


async def check_strategies(session: AsyncSession, user_id: int, now: int, kind: str) -> None:
    """Refuse a new strategy past the tier's count (deleted ones do not count), and a Python
    strategy on a tier without them."""
    await _serialise(session, user_id)
    tier = await tier_of(session, user_id, now)
    if kind == "python" and not tier.python_strategies:
        upgrade = next_up(tier)
        hint = f" Upgrade to {upgrade.name} under /v1/launch/tiers." if upgrade else ""
        raise TierLimit(f"The {tier.name} tier has no Python strategies (DSL only).{hint}")
    count = await session.scalar(
        select(func.count(Strategy.id)).where(
            Strategy.user_id == user_id, Strategy.deleted_at.is_(None)
        )
    )
    if (count or 0) >= tier.strategies:
        raise _refuse(tier, "strategies", "strategies", tier.strategies)


async def check_copy(session: AsyncSession, follower_id: int, leader_id: int, now: int) -> None:
    """Refuse a new copy relation past the follower's leaders or the leader's followers (relations
    that have not ended). Both users' rows are locked, in id order."""
    for user_id in sorted({follower_id, leader_id}):
        await _serialise(session, user_id)
    live = select(func.count(CopyRelation.id)).where(CopyRelation.status != "ended")
    tier = await tier_of(session, follower_id, now)
    following = await session.scalar(live.where(CopyRelation.follower_user_id == follower_id))
    if (following or 0) >= tier.leaders_followed:
        raise _refuse(tier, "leaders_followed", "leaders followed", tier.leaders_followed)
    leads = await tier_of(session, leader_id, now)
    followers = await session.scalar(live.where(CopyRelation.leader_user_id == leader_id))
    if (followers or 0) >= leads.followers:
        raise TierLimit(
            f"This leader has the {leads.followers} followers their {leads.name} tier allows."
        )


async def check_webhook_in_limit(
    session: AsyncSession, owner_id: int, token_id: int, tier: Tier
) -> None:
    """After a downgrade the oldest live tokens, up to the limit, keep working; newer ones stay
    (never deleted) but refuse alerts until the user upgrades or revokes older ones."""
    older = await session.scalar(
        select(func.count(WebhookToken.id))
        .join(Portfolio, Portfolio.id == WebhookToken.portfolio_id)
        .where(
            Portfolio.user_id == owner_id,
            Portfolio.deleted_at.is_(None),
            WebhookToken.revoked_at.is_(None),
            WebhookToken.id < token_id,
        )
    )
    if (older or 0) >= tier.webhook_tokens:
        raise TierLimit(
            f"This webhook is over the {tier.name} tier's {tier.webhook_tokens} webhook tokens "
            "and is paused (kept, not deleted): revoke another webhook or upgrade under "
            "/v1/launch/tiers."
        )


# After a downgrade, or when a paid period ends, nothing is deleted: of a user's live portfolios
# (strategies) the oldest, up to the tier's count, stay writable and the newer ones are
# read-only. A read-only object is listed and read as before; writes to it are `tier_limit`
# until the user upgrades again or deletes older ones (docs/tiers.md "After a downgrade").


def _rank_of_portfolios(ids: Collection[int]) -> Select[Any]:
    """Each portfolio of `ids` with its owner's membership and how many live portfolios of the
    same owner are older (its rank: 0 for the oldest)."""
    older = aliased(Portfolio)
    rank = (
        select(func.count(older.id))
        .where(
            older.user_id == Portfolio.user_id,
            older.deleted_at.is_(None),
            older.id < Portfolio.id,
        )
        .scalar_subquery()
    )
    return (
        select(Portfolio.id, Membership.tier, Membership.paid_until, rank)
        .outerjoin(Membership, Membership.user_id == Portfolio.user_id)
        .where(Portfolio.id.in_(list(ids)))
    )


def _paid(tier: str | None, paid_until: int | None, now: int) -> Tier:
    if tier is None or paid_until is None or paid_until <= now:
        return FREE
    return TIERS.get(tier, FREE)


def _portfolio_refusal(tier: Tier) -> TierLimit:
    upgrade = next_up(tier)
    hint = (
        f"upgrade to {upgrade.name} ({upgrade.portfolios} portfolios) under /v1/launch/tiers"
        if upgrade
        else "delete an older portfolio"
    )
    return TierLimit(
        f"This portfolio is read-only: it is over the {tier.name} tier's {tier.portfolios} "
        f"portfolios (kept, not deleted). Closing positions and cancelling orders still work; "
        f"to trade or change it, {hint}."
    )


def read_only_portfolios(session: Session, ids: Collection[int], now: int) -> dict[int, TierLimit]:
    """The portfolios of `ids` that are over their owner's tier, with the error to answer (one
    query; the order path calls it once per group of orders)."""
    refused: dict[int, TierLimit] = {}
    if not ids:
        return refused
    for portfolio_id, tier, paid_until, rank in session.execute(_rank_of_portfolios(ids)):
        found = _paid(tier, paid_until, now)
        if rank >= found.portfolios:
            refused[portfolio_id] = _portfolio_refusal(found)
    return refused


async def check_portfolio_writable(session: AsyncSession, portfolio_id: int, now: int) -> None:
    """Refuse a write to a portfolio that is over its owner's tier (see above)."""
    row = (await session.execute(_rank_of_portfolios([portfolio_id]))).first()
    if row is None:
        return
    found = _paid(row[1], row[2], now)
    if row[3] >= found.portfolios:
        raise _portfolio_refusal(found)


async def check_strategy_writable(session: AsyncSession, strategy: Strategy, now: int) -> None:
    """Refuse a write (new version, deployment, backtest) to a strategy over its owner's tier:
    the oldest live strategies, up to the count, stay writable."""
    tier = await tier_of(session, strategy.user_id, now)
    older = await session.scalar(
        select(func.count(Strategy.id)).where(
            Strategy.user_id == strategy.user_id,
            Strategy.deleted_at.is_(None),
            Strategy.id < strategy.id,
        )
    )
    if (older or 0) >= tier.strategies:
        upgrade = next_up(tier)
        hint = (
            f"upgrade to {upgrade.name} ({upgrade.strategies} strategies) under /v1/launch/tiers"
            if upgrade
            else "delete an older strategy"
        )
        raise TierLimit(
            f"This strategy is read-only: it is over the {tier.name} tier's {tier.strategies} "
            f"strategies (kept, not deleted). To change, deploy or backtest it, {hint}."
        )


async def check_backtest_period(session: AsyncSession, user_id: int, now: int, start: int) -> None:
    """A backtest may reach back the tier's days of history (B9: 90 days, 2 years, 5 years)."""
    tier = await tier_of(session, user_id, now)
    earliest = now - tier.backtest_history_days * 86_400_000
    if start < earliest:
        raise _refuse(
            tier, "backtest_history_days", "days of backtest history", tier.backtest_history_days
        )


async def check_backtests_at_once(
    session: AsyncSession, user_id: int, now: int, *, enforced: bool
) -> None:
    """Refuse a backtest past the user's backtests queued or running at once (the tier's, or
    elite's when tiers are not enforced), with the user's row locked so that two requests at
    once are counted one after the other."""
    await _serialise(session, user_id)
    tier = await tier_of(session, user_id, now) if enforced else ELITE
    count = await session.scalar(
        select(func.count(StrategyBacktest.id))
        .join(Strategy, Strategy.id == StrategyBacktest.strategy_id)
        .where(
            Strategy.user_id == user_id,
            StrategyBacktest.status.in_(("queued", "running")),
            StrategyBacktest.created_at > now - BACKTEST_STALE_MS,
        )
    )
    if (count or 0) >= tier.backtests_at_once:
        raise Conflict(
            f"You have {count} backtests queued or running; the {tier.name} tier runs "
            f"{tier.backtests_at_once} at once. Ask again when one has finished.",
            code="too_many_backtests",
        )


async def check_paid_subscription(session: AsyncSession, user_id: int, now: int) -> None:
    """A paid signal subscription needs a tier that has them (B9: not on free)."""
    tier = await tier_of(session, user_id, now)
    if not tier.paid_signal_subscriptions:
        upgrade = next_up(tier)
        hint = f" Upgrade to {upgrade.name} under /v1/launch/tiers." if upgrade else ""
        raise TierLimit(
            f"The {tier.name} tier has no paid signal subscriptions (free ones only).{hint}"
        )
