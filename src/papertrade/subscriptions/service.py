"""Subscriptions: subscribe, change, cancel, resubscribe; paid periods through the wallets;
renewal; the author's panel (docs/subscriptions.md). Services never commit."""

from collections.abc import Sequence
from decimal import Decimal

from sqlalchemy import ColumnElement, func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from papertrade.auth.principal import Principal
from papertrade.errors import Conflict, NotFound
from papertrade.kit.decimals import ZERO
from papertrade.models import Portfolio, Subscription, SubscriptionPrice, User
from papertrade.portfolios import service as portfolios
from papertrade.profiles.names import public_name
from papertrade.strategies import service as strategies
from papertrade.subscriptions.events import NewSubscriber, SubscriptionChanged
from papertrade.subscriptions.schemas import SubscribeBody, SubscriptionChange
from papertrade.tiers import limits as tier_limits
from papertrade.trading.enums import LedgerKind
from papertrade.uow import AsyncWork
from papertrade.wallet import service as wallet

ACTIVE, PAST_DUE, CANCELLED = "active", "past_due", "cancelled"
FREE, PAID, OWNER = "free", "paid", "owner"
PERIOD_MS = 30 * 86_400_000


def not_found() -> NotFound:
    return NotFound("Subscription not found.", code="subscription_not_found")


def joined(values: Sequence[str]) -> str:
    return ",".join(sorted(set(values)))


async def price_of(session: AsyncSession, portfolio_id: int) -> Decimal:
    row = await session.get(SubscriptionPrice, portfolio_id)
    return row.price if row is not None else ZERO


async def subscribable(
    session: AsyncSession, principal: Principal | None, portfolio_id: int
) -> Portfolio:
    """A public portfolio, or one of the caller's own (the owner follows it free); anonymous
    readers (principal None) see public ones only."""
    portfolio = await session.get(Portfolio, portfolio_id)
    if (
        portfolio is None
        or portfolio.deleted_at is not None
        or (
            portfolio.visibility != "public"
            and (principal is None or portfolio.user_id != principal.user_id)
        )
    ):
        raise NotFound("Portfolio not found.", code="portfolio_not_found")
    return portfolio


async def charge(uow: AsyncWork, sub: Subscription, note: str) -> None:
    """One period's price from the subscriber's wallet to the owner's; insufficient_funds
    (nothing moved) when the subscriber's wallet holds less."""
    # Both wallets locked in user-id order: two users paying each other cannot deadlock.
    for user_id in sorted({sub.user_id, sub.owner_user_id}):
        await wallet.locked(uow, user_id)
    reference = f"subscription:{sub.id}"
    await wallet.pay(
        uow,
        sub.user_id,
        LedgerKind.SUBSCRIPTION,
        sub.price,
        actor=wallet.user_actor(sub.user_id),
        reference=reference,
        note=note,
    )
    await wallet.credit(
        uow,
        sub.owner_user_id,
        LedgerKind.SUBSCRIPTION,
        sub.price,
        actor=wallet.user_actor(sub.user_id),
        reference=reference,
        note=note,
    )
    sub.paid_total += sub.price


def _changed(uow: AsyncWork, sub: Subscription, what: str) -> None:
    uow.emit(
        SubscriptionChanged(
            subscription_id=sub.id,
            user_id=sub.user_id,
            portfolio_id=sub.portfolio_id,
            strategy_id=sub.strategy_id,
            status=sub.status,
            what=what,
        )
    )


async def subscribe(
    uow: AsyncWork, principal: Principal, body: SubscribeBody, *, enforce_tier: bool = False
) -> Subscription:
    session = uow.session
    if body.strategy_id is not None:
        return await _follow_strategy(uow, principal, body, body.strategy_id)
    assert body.portfolio_id is not None  # the body holds one of the two
    portfolio = await subscribable(session, principal, body.portfolio_id)
    owner = portfolio.user_id == principal.user_id
    if owner and body.tier == PAID:  # self-dealing: paying yourself out of your own wallet
        raise Conflict(
            f"Portfolio {portfolio.code} is yours; you follow it free (tier free) and cannot "
            "pay for it.",
            code="subscription_own_portfolio",
        )
    tier = OWNER if owner else body.tier
    price = ZERO
    if tier == PAID and enforce_tier:  # B9: paid signal subscriptions from pro up
        await tier_limits.check_paid_subscription(session, principal.user_id, uow.now())
    if tier == PAID:
        price = await price_of(session, portfolio.id)
        if price <= ZERO:
            raise Conflict(
                f"Portfolio {portfolio.code} has no paid tier; subscribe free.",
                code="subscription_not_paid",
            )
    sub = await _mine_locked(session, principal, Subscription.portfolio_id == portfolio.id)
    if sub is not None and sub.status == ACTIVE:
        if sub.tier == PAID and sub.cancel_at_period_end and tier == PAID:
            sub.cancel_at_period_end = False  # resubscribed before the period ended
            _set_filters(sub, body.channels, body.events, body.symbols)
            _changed(uow, sub, "resubscribed")
            return sub
        raise Conflict(
            f"You already subscribe to {portfolio.code} (subscription {sub.id}); change it with "
            "PATCH, or cancel it first to change the tier.",
            code="subscription_exists",
        )
    new = {"portfolio_id": portfolio.id, "owner_user_id": portfolio.user_id}
    sub, what = await _start(uow, principal, sub, body, tier, price, new)
    if tier == PAID:
        await charge(uow, sub, f"subscription to {portfolio.code}, 30 days")
    _changed(uow, sub, what)
    await _tell_owner(uow, sub, portfolio.name)
    return sub


async def _follow_strategy(
    uow: AsyncWork, principal: Principal, body: SubscribeBody, strategy_id: int
) -> Subscription:
    """A public strategy's executed signals (its history is public already): free, every event
    on every channel chosen; the owner follows their own, private ones too."""
    session = uow.session
    strategy = await strategies.get_readable(session, principal, strategy_id)
    if body.tier == PAID:
        raise Conflict(
            f"Strategy {strategy.code} is followed free (its signals are public); subscribe "
            "with tier free.",
            code="subscription_not_paid",
        )
    sub = await _mine_locked(session, principal, Subscription.strategy_id == strategy.id)
    if sub is not None and sub.status == ACTIVE:
        raise Conflict(
            f"You already subscribe to {strategy.code} (subscription {sub.id}); change it with "
            "PATCH.",
            code="subscription_exists",
        )
    tier = OWNER if strategy.user_id == principal.user_id else FREE
    new = {"strategy_id": strategy.id, "owner_user_id": strategy.user_id}
    sub, what = await _start(uow, principal, sub, body, tier, ZERO, new)
    _changed(uow, sub, what)
    await _tell_owner(uow, sub, strategy.name)
    return sub


async def _tell_owner(uow: AsyncWork, sub: Subscription, name: str) -> None:
    """The owner hears of a new subscriber (not of themselves following their own)."""
    if sub.tier == OWNER or sub.user_id == sub.owner_user_id:
        return
    subscriber = await uow.session.get(User, sub.user_id)
    uow.emit(
        NewSubscriber(
            subscription_id=sub.id,
            owner_user_id=sub.owner_user_id,
            portfolio_id=sub.portfolio_id,
            strategy_id=sub.strategy_id,
            name=name,
            subscriber_name=public_name(subscriber) if subscriber is not None else "A trader",
            tier=sub.tier,
        )
    )


async def _mine_locked(
    session: AsyncSession, principal: Principal, target: ColumnElement[bool]
) -> Subscription | None:
    """The caller's subscription to a portfolio or strategy (any status), locked."""
    statement = select(Subscription).where(Subscription.user_id == principal.user_id, target)
    return await session.scalar(statement.with_for_update())


async def _start(
    uow: AsyncWork,
    principal: Principal,
    sub: Subscription | None,
    body: SubscribeBody,
    tier: str,
    price: Decimal,
    new: dict[str, int],
) -> tuple[Subscription, str]:
    """A new subscription (`new`: its target and owner), or an ended one active again, for
    `tier` from now; with what it was ("subscribed" or "resubscribed")."""
    now = uow.now()
    what = "resubscribed"
    if sub is None:
        what = "subscribed"
        sub = Subscription(user_id=principal.user_id, paid_total=ZERO, created_at=now, **new)
        uow.session.add(sub)
    sub.tier, sub.status, sub.price = tier, ACTIVE, price
    sub.started_at, sub.cancel_at_period_end, sub.cancelled_at = now, False, None
    sub.current_period_end = now + PERIOD_MS if tier == PAID else None
    _set_filters(sub, body.channels, body.events, body.symbols)
    try:
        await uow.session.flush()
    except IntegrityError:
        # The same user subscribing at the same instant made it first (the unique index). No
        # savepoint: the unit of work is refused whole (and on SQLite a savepoint opened before
        # any write would commit on release).
        raise Conflict(
            "You subscribed to it a moment ago (another request made the subscription); "
            "change it with PATCH, or cancel it first to change the tier.",
            code="subscription_exists",
        ) from None
    return sub, what


def _set_filters(
    sub: Subscription,
    channels: Sequence[str] | None,
    events: Sequence[str] | None,
    symbols: Sequence[str] | None,
) -> None:
    if channels is not None:
        sub.channels = joined(channels)
    if events is not None:
        sub.events = joined(events)
    if symbols is not None:
        sub.symbols = joined(symbols)


async def mine(session: AsyncSession, user_id: int) -> Sequence[Subscription]:
    statement = select(Subscription).where(Subscription.user_id == user_id)
    return (await session.scalars(statement.order_by(Subscription.id.desc()))).all()


async def owned(uow: AsyncWork, user_id: int, subscription_id: int) -> Subscription:
    sub = await uow.session.get(Subscription, subscription_id, with_for_update=True)
    if sub is None or sub.user_id != user_id:
        raise not_found()
    return sub


async def change(
    uow: AsyncWork, user_id: int, subscription_id: int, body: SubscriptionChange
) -> Subscription:
    sub = await owned(uow, user_id, subscription_id)
    _set_filters(sub, body.channels, body.events, body.symbols)
    return sub


async def cancel(uow: AsyncWork, user_id: int, subscription_id: int) -> Subscription:
    """A paid period runs to its end (then ends); anything else ends now."""
    sub = await owned(uow, user_id, subscription_id)
    if sub.status == CANCELLED or sub.cancel_at_period_end:
        raise Conflict("This subscription is already cancelled.", code="subscription_cancelled")
    if sub.tier == PAID and sub.status == ACTIVE:
        sub.cancel_at_period_end = True
        _changed(uow, sub, "cancelling")
    else:
        sub.status, sub.cancelled_at = CANCELLED, uow.now()
        _changed(uow, sub, "ended")
    return sub


async def end_now(uow: AsyncWork, sub: Subscription, what: str) -> None:
    """End a subscription at once, paid period or not (an account is deleted: nobody is left to
    send signals to, or to send them). Nothing is refunded; the subscriber is told why."""
    if sub.status == CANCELLED:
        return
    sub.status, sub.cancelled_at, sub.cancel_at_period_end = CANCELLED, uow.now(), False
    _changed(uow, sub, what)


async def renew(uow: AsyncWork, subscription_id: int) -> str:
    """Renew one paid subscription whose period is over: 'renewed', 'ended' (cancelled at the
    period's end), 'past_due' (the wallet could not pay; retried on each run) or 'skipped'."""
    sub = await uow.session.get(Subscription, subscription_id, with_for_update=True)
    now = uow.now()
    due = sub is not None and sub.tier == PAID and sub.status in (ACTIVE, PAST_DUE)
    if sub is None or not due or (sub.current_period_end or 0) > now:
        return "skipped"
    if sub.cancel_at_period_end:
        sub.status, sub.cancelled_at = CANCELLED, now
        _changed(uow, sub, "ended")
        return "ended"
    try:
        async with uow.session.begin_nested():
            await charge(uow, sub, "subscription renewal, 30 days")
    except Conflict:  # insufficient_funds: nothing moved
        if sub.status != PAST_DUE:
            sub.status = PAST_DUE
            _changed(uow, sub, "past_due")
        return "past_due"
    start = sub.current_period_end if sub.status == ACTIVE and sub.current_period_end else now
    sub.status, sub.current_period_end = ACTIVE, start + PERIOD_MS
    _changed(uow, sub, "renewed")
    return "renewed"


async def set_price(
    uow: AsyncWork, principal: Principal, portfolio_id: int, price: Decimal
) -> Decimal:
    """The owner's price for 30 days of the paid tier; it applies to new periods."""
    await portfolios.get_owned(uow.session, principal, portfolio_id)
    row = await uow.session.get(SubscriptionPrice, portfolio_id, with_for_update=True)
    if row is None:
        row = SubscriptionPrice(portfolio_id=portfolio_id, price=price)
        uow.session.add(row)
    row.price, row.updated_at = price, uow.now()
    return price


async def counts(session: AsyncSession, portfolio_id: int) -> dict[str, int]:
    rows = await session.execute(
        select(Subscription.status, Subscription.tier, func.count())
        .where(Subscription.portfolio_id == portfolio_id)
        .group_by(Subscription.status, Subscription.tier)
    )
    tally = {"active": 0, "paid": 0, "free": 0, "past_due": 0, "cancelled": 0, "ever": 0}
    for status, tier, count in rows.all():
        tally["ever"] += count
        if status == ACTIVE:
            tally["active"] += count
            tally["paid" if tier == PAID else "free"] += count
        else:
            tally[status] += count
    return tally


async def subscribers(session: AsyncSession, portfolio_id: int) -> Sequence[Subscription]:
    statement = select(Subscription).where(Subscription.portfolio_id == portfolio_id)
    return (await session.scalars(statement.order_by(Subscription.id.desc()))).all()
