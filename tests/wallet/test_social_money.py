"""Issue #17 item 11 as a property: over any sequence of subscription payments (subscribe,
renew, go past due, cancel, resubscribe), revenue-share settlements along any path of net PnL,
price changes, transfers and trades (MARKET orders through the order path, with fees), the money
of everyone involved changes only by what came in from outside (recharges) and by trading (its
realized PnL and fees): settlements and subscription payments move money, never create it.
Every wallet and portfolio equals its ledger and no wallet is ever negative."""

import asyncio
import uuid
from decimal import Decimal

from fastapi import FastAPI
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import select

from papertrade.auth.principal import Principal
from papertrade.config import Settings
from papertrade.context import AppContext
from papertrade.copytrading import service as copies
from papertrade.copytrading.schemas import RelationCreate
from papertrade.errors import PapertradeError
from papertrade.kit.dbtypes import decimal_sum
from papertrade.market.sim import SimFeed
from papertrade.models import CopyRelation, LedgerEntry, Portfolio, Subscription, User, Wallet
from papertrade.orders import service as orders
from papertrade.orders.commands import PlaceOrder
from papertrade.orders.pricing import Venue
from papertrade.portfolios import service as portfolios
from papertrade.subscriptions import service as subscriptions
from papertrade.subscriptions.jobs import renew_due
from papertrade.subscriptions.schemas import SubscribeBody
from papertrade.subscriptions.service import PERIOD_MS
from papertrade.trading.enums import LedgerKind, OrderType, Side
from papertrade.wallet import service as wallets

TRADED_AT, LOT = Decimal(50_000), Decimal("0.003")  # 150 USDT: over the 100 minimum
TRADING = (
    LedgerKind.REALIZED_PNL,
    LedgerKind.COMMISSION,
    LedgerKind.FUNDING,
    LedgerKind.LIQUIDATION,
)

AMOUNTS = st.decimals(min_value=Decimal("0.000001"), max_value=Decimal(80), places=6)
PNL = st.decimals(min_value=Decimal(-500), max_value=Decimal(500), places=6)
STEPS = st.lists(
    st.one_of(
        st.tuples(st.just("recharge"), st.integers(0, 1), AMOUNTS),
        st.tuples(st.just("to_portfolio"), st.integers(0, 1), AMOUNTS),
        st.tuples(st.just("from_portfolio"), st.integers(0, 1), AMOUNTS),
        st.tuples(st.just("price"), st.just(0), st.decimals(min_value=0, max_value=40, places=6)),
        st.tuples(st.just("subscribe"), st.just(1), st.sampled_from(["paid", "free"])),
        st.tuples(st.just("cancel"), st.just(1), st.just(Decimal(0))),
        st.tuples(st.just("renew"), st.just(1), st.just(Decimal(0))),
        st.tuples(st.just("settle"), st.just(1), PNL),
        # a MARKET order of 0.003 BTC at 50,000 + the offset (an even offset buys, an odd sells)
        st.tuples(st.just("trade"), st.integers(0, 1), st.integers(-300, 300).map(Decimal)),
    ),
    max_size=14,
)


async def _sum(ctx: AppContext, column: object, *where: object) -> Decimal:
    async with ctx.db.reader() as session:
        total = await session.scalar(select(decimal_sum(column)).where(*where))  # type: ignore[arg-type]
    return total if total is not None else Decimal(0)


async def _person(ctx: AppContext, name: str, visibility: str) -> tuple[int, int]:
    async with ctx.transaction() as uow:
        user = User(email=f"{uuid.uuid4().hex}@example.com", password_hash="x")
        uow.session.add(user)
        await uow.session.flush()
        portfolio = await portfolios.create(
            uow,
            user.id,
            name=name,
            description="",
            initial_balance=Decimal(100),
            visibility=visibility,
            maker_fee_rate=Decimal(0),
            taker_fee_rate=Decimal("0.0005"),  # trades pay fees
            enforce_tier=False,
        )
        return user.id, portfolio.id


async def _step(
    ctx: AppContext, people: list[tuple[int, int]], kind: str, who: int, value: Decimal | str
) -> Decimal:
    """One step in its own unit of work; returns the money it brought from outside."""
    if kind == "subscribe":
        tier = "paid" if value == "paid" else "free"
        async with ctx.transaction() as uow:
            principal = Principal(kind="session", user_id=people[who][0], credential_id=0)
            body = SubscribeBody(portfolio_id=people[0][1], tier=tier)
            await subscriptions.subscribe(uow, principal, body)
        return Decimal(0)
    assert isinstance(value, Decimal)
    user_id, portfolio_id = people[who]
    principal = Principal(kind="session", user_id=user_id, credential_id=0)
    (_owner, leader_portfolio), (fan, copy_portfolio) = people
    async with ctx.transaction() as uow:
        if kind == "recharge":
            await wallets.credit(uow, user_id, LedgerKind.RECHARGE, value, actor="t")
            return value
        if kind == "trade":
            assert isinstance(ctx.market, SimFeed)
            await ctx.market.set_price("BTCUSDT", TRADED_AT + value)
            side = Side.BUY if int(value) % 2 == 0 else Side.SELL
            order = PlaceOrder(portfolio_id, "BTCUSDT", side, OrderType.MARKET, quantity=LOT)
            await orders.place_one(uow, Venue.of(ctx), principal, order)
        elif kind in ("to_portfolio", "from_portfolio"):
            await wallets.transfer(
                uow, None, principal, portfolio_id, value, to_portfolio=kind == "to_portfolio"
            )
        elif kind == "price":
            await subscriptions.set_price(uow, principal, leader_portfolio, value)
        else:
            sub = await uow.session.scalar(
                select(Subscription).where(Subscription.user_id == fan).with_for_update()
            )
            if kind == "cancel" and sub is not None:
                await subscriptions.cancel(uow, fan, sub.id)
            elif kind == "renew" and sub is not None and sub.current_period_end is not None:
                sub.current_period_end -= PERIOD_MS  # as if the period were over
            elif kind == "settle":
                relation = await uow.session.scalar(
                    select(CopyRelation)
                    .where(CopyRelation.follower_portfolio_id == copy_portfolio)
                    .with_for_update()
                )
                assert relation is not None
                relation.cum_net_pnl = value  # the copies' net PnL so far (trading moved it)
                await copies.settle(uow, relation, "weekly")
    if kind == "renew":
        await renew_due(ctx)
    return Decimal(0)


async def _run(
    db_settings: Settings, price: Decimal, steps: list[tuple[str, int, Decimal | str]]
) -> None:
    ctx = AppContext.build(db_settings)
    ctx.market = SimFeed(seed=7, symbols=["BTCUSDT"])  # prices pinned by each trade step
    try:
        people = [await _person(ctx, "lead", "public"), await _person(ctx, "copies", "private")]
        (owner, leader_portfolio), (fan, copy_portfolio) = people
        async with ctx.transaction() as uow:
            fan_principal = Principal(kind="session", user_id=fan, credential_id=0)
            body = RelationCreate(
                leader_portfolio_id=leader_portfolio,
                portfolio_id=copy_portfolio,
                mode="fixed_ratio",
                allocation=Decimal(100),
            )
            await copies.follow(uow, fan_principal, body, enforce_tier=False)
        # A paid subscription to start from (the steps then renew, cancel, resubscribe it…).
        outside = Decimal(200)
        outside += await _step(ctx, people, "price", 0, price)
        outside += await _step(ctx, people, "recharge", 1, Decimal(50))
        outside += await _step(ctx, people, "subscribe", 1, "paid")
        for kind, who, value in steps:
            try:
                outside += await _step(ctx, people, kind, who, value)
            except PapertradeError:
                continue  # refused (insufficient funds, exists, not active): nothing moved
        user_ids = [owner, fan]
        portfolio_ids = [leader_portfolio, copy_portfolio]
        async with ctx.db.reader() as session:
            for wallet in await session.scalars(select(Wallet).where(Wallet.user_id.in_(user_ids))):
                assert wallet.balance >= 0
                assert wallet.balance == await wallets.ledger_balance(session, wallet.id)
        for portfolio_id in portfolio_ids:
            # (no liquidation engine runs here, so a portfolio's losses are not bounded by it)
            balance = await _sum(ctx, Portfolio.balance, Portfolio.id == portfolio_id)
            assert await _sum(
                ctx, LedgerEntry.amount, LedgerEntry.portfolio_id == portfolio_id
            ) == (balance)
        in_wallets = await _sum(ctx, Wallet.balance, Wallet.user_id.in_(user_ids))
        in_portfolios = await _sum(ctx, Portfolio.balance, Portfolio.id.in_(portfolio_ids))
        trading = await _sum(
            ctx,
            LedgerEntry.amount,
            LedgerEntry.portfolio_id.in_(portfolio_ids),
            LedgerEntry.kind.in_([k.value for k in TRADING]),
        )
        assert in_wallets + in_portfolios == outside + trading
    finally:
        await ctx.close()


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(price=st.decimals(min_value=Decimal("0.000001"), max_value=40, places=6), steps=STEPS)
def test_subscriptions_and_settlements_move_money_never_make_it(
    wapp: FastAPI,
    wallet_settings: Settings,
    price: Decimal,
    steps: list[tuple[str, int, Decimal | str]],
) -> None:
    asyncio.run(_run(wallet_settings, price, steps))
