"""What the other areas do when an account, or one portfolio, is deleted (docs/profile.md): each
step goes through the area's own service, so money moves only the way it always does."""

from decimal import Decimal

from sqlalchemy import or_, select

from papertrade.comments import service as comments
from papertrade.copytrading import service as copies
from papertrade.models import CopyRelation, Strategy, Subscription
from papertrade.orders.pricing import Venue
from papertrade.strategies import service as strategies
from papertrade.subscriptions import service as subscriptions
from papertrade.uow import AsyncWork

LEADER_DELETED = "deleted"  # end_reason and settlement reason (at most 8 characters)
PORTFOLIO_DELETED = "portfolio_deleted"  # a subscription's `what` when its owner leaves


async def leave(uow: AsyncWork, venue: Venue, user_id: int) -> None:
    """Before the account's portfolios go: its copies, subscriptions, comments and strategies."""
    await _stop_following(uow, venue, user_id)
    await _release_followers(uow, user_id)
    await _end_subscriptions(uow, user_id)
    await comments.remove_all_by(uow, user_id)
    owned = await uow.session.scalars(
        select(Strategy)
        .where(Strategy.user_id == user_id, Strategy.deleted_at.is_(None))
        .with_for_update(key_share=True)  # as strategies.service.get_owned: rows may point at it
    )
    for strategy in list(owned):
        await strategies.soft_delete(uow, strategy)  # its deployments stop


async def portfolio_goes(uow: AsyncWork, venue: Venue, portfolio_id: int, owner_id: int) -> None:
    """Before one portfolio is deleted: its copies of leaders are unfollowed (settled as usual),
    the copies of it end (`end_reason` deleted, settled at the leader's share: the leader is
    still there to receive it; followers keep their positions), and the subscriptions to it end
    now (subscribers told `portfolio_deleted`), so nobody keeps paying for a portfolio that
    is gone."""
    session = uow.session
    following = await session.scalars(
        select(CopyRelation.id).where(
            CopyRelation.follower_portfolio_id == portfolio_id,
            CopyRelation.status != copies.ENDED,
        )
    )
    for relation_id in list(following):
        await copies.unfollow(uow, venue, owner_id, relation_id, close_positions=False)
    copied = await session.scalars(
        select(CopyRelation)
        .where(
            CopyRelation.leader_portfolio_id == portfolio_id, CopyRelation.status != copies.ENDED
        )
        .order_by(CopyRelation.id)
        .with_for_update()
    )
    for relation in list(copied):
        await copies.end(uow, relation, LEADER_DELETED)
    followed = await session.scalars(
        select(Subscription)
        .where(
            Subscription.portfolio_id == portfolio_id,
            Subscription.status != subscriptions.CANCELLED,
        )
        .order_by(Subscription.id)
        .with_for_update()
    )
    for sub in list(followed):
        await subscriptions.end_now(uow, sub, PORTFOLIO_DELETED)


async def _stop_following(uow: AsyncWork, venue: Venue, user_id: int) -> None:
    """As a follower: unfollowed the normal way, settling the revenue share owed to the leader.
    Positions stay as they are (the portfolios are deleted with them, as records)."""
    relations = await uow.session.scalars(
        select(CopyRelation.id).where(
            CopyRelation.follower_user_id == user_id, CopyRelation.status != copies.ENDED
        )
    )
    for relation_id in list(relations):
        await copies.unfollow(uow, venue, user_id, relation_id, close_positions=False)


async def _release_followers(uow: AsyncWork, user_id: int) -> None:
    """As a leader: every follower's relation ends (`copy.ended`, reason deleted, tells both)
    and settles with no share charged: the leader's wallet is forfeited with the account, so a
    fee would reach nobody. The followers' copied positions stay open for them to manage."""
    relations = await uow.session.scalars(
        select(CopyRelation)
        .where(CopyRelation.leader_user_id == user_id, CopyRelation.status != copies.ENDED)
        .order_by(CopyRelation.id)
        .with_for_update()
    )
    for relation in list(relations):
        relation.profit_share_pct = Decimal(0)  # the settlement records 0 %: nothing is owed
        await copies.end(uow, relation, LEADER_DELETED)


async def _end_subscriptions(uow: AsyncWork, user_id: int) -> None:
    """The user's own subscriptions end now; so do everyone's subscriptions to the user's
    portfolios (each subscriber told `portfolio_deleted`). No refunds: see docs/profile.md."""
    rows = await uow.session.scalars(
        select(Subscription)
        .where(
            or_(Subscription.user_id == user_id, Subscription.owner_user_id == user_id),
            Subscription.status != subscriptions.CANCELLED,
        )
        .order_by(Subscription.id)
        .with_for_update()
    )
    for sub in list(rows):
        what = "ended" if sub.user_id == user_id else PORTFOLIO_DELETED
        await subscriptions.end_now(uow, sub, what)
