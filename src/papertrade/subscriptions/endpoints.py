"""/v1/subscribe, /v1/subscriptions/*, and a portfolio's subscribers (owner's panel, public
counts) and price."""

from fastapi import APIRouter

from papertrade.auth.v1 import Caller, Ctx, MaybeCaller, Writer
from papertrade.kit.decimals import ZERO
from papertrade.kit.ids import Id
from papertrade.models import Subscription
from papertrade.portfolios import service as portfolios
from papertrade.subscriptions import service
from papertrade.subscriptions.schemas import (
    Counts,
    Panel,
    PriceBody,
    SubscribeBody,
    Subscriber,
    SubscriptionChange,
    SubscriptionRead,
)

router = APIRouter(tags=["subscriptions"])


def split(text: str) -> list[str]:
    return [part for part in text.split(",") if part]


def render(sub: Subscription) -> SubscriptionRead:
    return SubscriptionRead(
        id=sub.id,
        portfolio_id=sub.portfolio_id,
        strategy_id=sub.strategy_id,
        tier=sub.tier,
        status=sub.status,
        price=sub.price,
        channels=split(sub.channels),
        events=split(sub.events),
        symbols=split(sub.symbols),
        started_at=sub.started_at,
        current_period_end=sub.current_period_end,
        cancel_at_period_end=sub.cancel_at_period_end,
        cancelled_at=sub.cancelled_at,
    )


@router.post("/subscribe", status_code=201, response_model=SubscriptionRead)
async def subscribe(body: SubscribeBody, principal: Writer, ctx: Ctx) -> SubscriptionRead:
    """Subscribe to a public portfolio (free, or paid: the owner's price for 30 days, from my
    wallet) or to a public strategy (free); also resubscribes after a cancellation."""
    async with ctx.transaction() as uow:
        return render(
            await service.subscribe(uow, principal, body, enforce_tier=ctx.settings.tiers_enforced)
        )


@router.get("/subscriptions/my", response_model=list[SubscriptionRead])
async def mine(principal: Caller, ctx: Ctx) -> list[SubscriptionRead]:
    async with ctx.db.reader() as session:
        return [render(s) for s in await service.mine(session, principal.user_id)]


@router.patch("/subscriptions/{subscription_id}", response_model=SubscriptionRead)
async def change(
    subscription_id: Id, body: SubscriptionChange, principal: Writer, ctx: Ctx
) -> SubscriptionRead:
    """Change the channels, events or symbols."""
    async with ctx.transaction() as uow:
        return render(await service.change(uow, principal.user_id, subscription_id, body))


@router.post("/subscriptions/{subscription_id}/cancel", response_model=SubscriptionRead)
async def cancel(subscription_id: Id, principal: Writer, ctx: Ctx) -> SubscriptionRead:
    """Cancel: a paid period keeps its access to its end and is not renewed."""
    async with ctx.transaction() as uow:
        return render(await service.cancel(uow, principal.user_id, subscription_id))


async def _counts(ctx: Ctx, portfolio_id: int) -> tuple[Counts, dict[str, int]]:
    async with ctx.db.reader() as session:
        tally = await service.counts(session, portfolio_id)
        price = await service.price_of(session, portfolio_id)
    counts = Counts(
        portfolio_id=portfolio_id,
        active=tally["active"],
        paid=tally["paid"],
        free=tally["free"],
        price=price,
    )
    return counts, tally


@router.get("/portfolios/{portfolio_id}/subscriber-counts", response_model=Counts)
async def public_counts(portfolio_id: Id, principal: MaybeCaller, ctx: Ctx) -> Counts:
    """How many subscribe to a public portfolio, and its price: no sign-in needed, as the
    public portfolio page shows them to everyone (a private one: its owner only)."""
    async with ctx.db.reader() as session:
        await service.subscribable(session, principal, portfolio_id)
    return (await _counts(ctx, portfolio_id))[0]


@router.get("/portfolios/{portfolio_id}/subscribers", response_model=Panel)
async def panel(portfolio_id: Id, principal: Caller, ctx: Ctx) -> Panel:
    """The owner's subscriber panel: who, tier, since, channels, revenue, churn."""
    async with ctx.db.reader() as session:
        await portfolios.get_owned(session, principal, portfolio_id)
        rows = await service.subscribers(session, portfolio_id)
    counts, tally = await _counts(ctx, portfolio_id)
    return Panel(
        counts=counts,
        past_due=tally["past_due"],
        cancelled=tally["cancelled"],
        revenue=sum((row.paid_total for row in rows), start=ZERO),
        churn=tally["cancelled"] / tally["ever"] if tally["ever"] else 0.0,
        subscribers=[
            Subscriber(
                user_id=row.user_id,
                tier=row.tier,
                status=row.status,
                since=row.started_at,
                channels=split(row.channels),
                paid_total=row.paid_total,
                cancelled_at=row.cancelled_at,
            )
            for row in rows
        ],
    )


@router.put("/portfolios/{portfolio_id}/subscription-price", response_model=Counts)
async def set_price(portfolio_id: Id, body: PriceBody, principal: Writer, ctx: Ctx) -> Counts:
    """The paid tier's price for 30 days (0: free only); new periods pay it."""
    async with ctx.transaction() as uow:
        await service.set_price(uow, principal, portfolio_id, body.price)
    return (await _counts(ctx, portfolio_id))[0]
