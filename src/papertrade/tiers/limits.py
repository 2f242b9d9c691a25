"""Which tier a user is on, and the limits checked at the one place each object is created
(portfolios.service.create, portfolios.credentials.create_webhook_token, strategies.service.create,
copytrading.service.follow). Imports no service, so that those can import it."""

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from papertrade.errors import Forbidden
from papertrade.models import CopyRelation, Membership, Portfolio, Strategy, User, WebhookToken
from papertrade.tiers.table import FREE, TIERS, Tier, next_up


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


async def check_portfolios(session: AsyncSession, user_id: int, now: int) -> None:
    """Refuse a new portfolio past the tier's limit (deleted ones do not count). The user's row
    is locked first, so two creations at once are counted one after the other."""
    await session.execute(select(User.id).where(User.id == user_id).with_for_update())
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
    await session.execute(select(User.id).where(User.id == user_id).with_for_update())
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
    await session.execute(select(User.id).where(User.id == user_id).with_for_update())
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
        await session.execute(select(User.id).where(User.id == user_id).with_for_update())
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
