"""Money invariants over random sequences (hypothesis) and payments racing on one wallet.

Issue 30: the two currencies never mix. Over any sequence of recharges and operator credits
(money from outside), free top-ups, transfers (both directions asked: out of a portfolio is
always refused), tier purchases and refunds, paid subscriptions (subscribe, cancel, renew) and
copy-trading settlements across three users, after **every** step: the sum of all wallets plus
the platform's revenue (tier payments less refunds), plus what wallets moved into portfolios
(real money that became paper, one way), equals what came in from outside; the
portfolios hold exactly their paper (deposits, top-ups, what wallets moved in; settlements move
it between portfolios); every wallet equals its ledger and is never negative.
"""

import asyncio
import uuid
from decimal import Decimal

from fastapi import FastAPI
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import select

from papertrade.accounts import service as accounts
from papertrade.auth.principal import Principal
from papertrade.config import Settings
from papertrade.context import AppContext
from papertrade.copytrading import service as copytrading
from papertrade.errors import PapertradeError
from papertrade.kit.dbtypes import decimal_sum
from papertrade.models import CopyRelation, LedgerEntry, Portfolio, User, Wallet, WalletEntry
from papertrade.portfolios import service as portfolios
from papertrade.recharge import service as recharges
from papertrade.recharge.watcher import watch_once
from papertrade.subscriptions import service as subscriptions
from papertrade.subscriptions.schemas import SubscribeBody
from papertrade.tiers import service as tiers
from papertrade.trading.enums import LedgerKind
from papertrade.uow import AsyncWork
from papertrade.wallet import service as wallets
from tests.conftest import PG_URL
from tests.conftest import User as Member
from tests.fakes.trongrid import FakeTronGrid
from tests.wallet.conftest import balance, fund

PEOPLE = 3
AMOUNTS = st.decimals(min_value=Decimal("0.000001"), max_value=Decimal(60), places=6)
PNL = st.decimals(min_value=Decimal(-50), max_value=Decimal(500), places=6)
WHO = st.integers(0, PEOPLE - 1)
OTHER = st.integers(1, PEOPLE - 1)  # added to `who`: always someone else
STEPS = st.lists(
    st.one_of(
        st.tuples(st.just("recharge"), WHO, OTHER, AMOUNTS),
        st.tuples(st.just("operator_credit"), WHO, OTHER, AMOUNTS),
        st.tuples(st.just("top_up"), WHO, OTHER, AMOUNTS),
        st.tuples(st.just("tier"), WHO, OTHER, st.sampled_from(["free", "pro", "elite"])),
        st.tuples(st.just("to_portfolio"), WHO, OTHER, AMOUNTS),
        st.tuples(st.just("from_portfolio"), WHO, OTHER, AMOUNTS),
        st.tuples(st.just("subscribe"), WHO, OTHER, st.just(None)),
        st.tuples(st.just("cancel"), WHO, OTHER, st.just(None)),
        st.tuples(st.just("renew"), WHO, OTHER, st.just(None)),
        st.tuples(st.just("settle"), WHO, OTHER, PNL),
    ),
    max_size=16,
)
SUBSCRIPTION_PRICE = Decimal(7)
INITIAL = Decimal(100)
FROM_OUTSIDE = ("recharge", "operator_credit")


async def _sum(ctx: AppContext, column: object, *where: object) -> Decimal:
    async with ctx.db.reader() as session:
        total = await session.scalar(select(decimal_sum(column)).where(*where))  # type: ignore[arg-type]
    return total if total is not None else Decimal(0)


async def _check(
    ctx: AppContext, user_ids: list[int], portfolio_ids: list[int], outside: Decimal, paper: Decimal
) -> None:
    """The invariants, after one step."""
    mine = WalletEntry.wallet_id.in_(select(Wallet.id).where(Wallet.user_id.in_(user_ids)))
    async with ctx.db.reader() as session:
        for wallet in await session.scalars(select(Wallet).where(Wallet.user_id.in_(user_ids))):
            assert wallet.balance >= 0
            assert wallet.balance == await wallets.ledger_balance(session, wallet.id)
    in_wallets = await _sum(ctx, Wallet.balance, Wallet.user_id.in_(user_ids))
    tier_money = await _sum(
        ctx,
        WalletEntry.amount,
        mine,
        WalletEntry.kind.in_([LedgerKind.TIER_PAYMENT.value, LedgerKind.TIER_REFUND.value]),
    )
    platform_revenue = -tier_money
    # Real money that wallets moved into portfolios left the real currency for good (it is
    # paper now, and nothing brings it back).
    moved_in = -await _sum(
        ctx, WalletEntry.amount, mine, WalletEntry.kind == LedgerKind.WALLET_TRANSFER.value
    )
    assert in_wallets + platform_revenue + moved_in == outside  # only what came from outside
    kinds = set(await _kinds(ctx, mine))  # nothing from a portfolio ever reached a wallet
    assert kinds <= {
        "recharge",
        "operator_credit",
        "tier_payment",
        "tier_refund",
        "subscription",
        "wallet_transfer",
    }
    positive = WalletEntry.amount > 0
    assert (
        await _sum(ctx, WalletEntry.amount, mine, WalletEntry.kind == "wallet_transfer", positive)
        == 0
    )
    in_portfolios = await _sum(ctx, Portfolio.balance, Portfolio.id.in_(portfolio_ids))
    assert in_portfolios == paper + moved_in  # paper: deposits and top-ups, and what moved in
    for portfolio_id in portfolio_ids:
        held = await _sum(ctx, Portfolio.balance, Portfolio.id == portfolio_id)
        assert await _sum(ctx, LedgerEntry.amount, LedgerEntry.portfolio_id == portfolio_id) == held


async def _kinds(ctx: AppContext, where: object) -> list[str]:
    async with ctx.db.reader() as session:
        rows = await session.scalars(select(WalletEntry.kind).where(where).distinct())  # type: ignore[arg-type]
        return list(rows.all())


async def _run(db_settings: Settings, steps: list[tuple[str, int, int, object]]) -> None:
    ctx = AppContext.build(db_settings)
    try:
        people: list[tuple[int, int]] = []
        async with ctx.transaction() as uow:
            for _ in range(PEOPLE):
                user = User(email=f"{uuid.uuid4().hex}@example.com", password_hash="x")
                uow.session.add(user)
                await uow.session.flush()
                portfolio = await portfolios.create(
                    uow,
                    user.id,
                    name="p",
                    description="",
                    initial_balance=INITIAL,
                    visibility="public",
                    maker_fee_rate=Decimal(0),
                    taker_fee_rate=Decimal(0),
                    enforce_tier=False,
                )
                people.append((user.id, portfolio.id))
            for user_id, portfolio_id in people:  # a paid tier of signals on each portfolio
                owner = Principal(kind="session", user_id=user_id, credential_id=0)
                await subscriptions.set_price(uow, owner, portfolio_id, SUBSCRIPTION_PRICE)
        user_ids = [u for u, _ in people]
        portfolio_ids = [p for _, p in people]
        outside = Decimal(0)
        paper = INITIAL * PEOPLE
        await _check(ctx, user_ids, portfolio_ids, outside, paper)
        for kind, who, shift, value in steps:
            user_id, portfolio_id = people[who]
            other = people[(who + shift) % PEOPLE]
            principal = Principal(kind="session", user_id=user_id, credential_id=0)
            try:
                async with ctx.transaction() as uow:
                    if kind in FROM_OUTSIDE:
                        assert isinstance(value, Decimal)
                        credit = (
                            LedgerKind.RECHARGE
                            if kind == "recharge"
                            else (LedgerKind.OPERATOR_CREDIT)
                        )
                        await wallets.credit(uow, user_id, credit, value, actor="t")
                    elif kind == "top_up":
                        assert isinstance(value, Decimal)
                        portfolio = await portfolios.get_owned(
                            uow.session, principal, portfolio_id, for_update=True
                        )
                        accounts.top_up(uow, portfolio, value)
                    elif kind == "tier":
                        await tiers.change(uow, user_id, str(value))
                    elif kind in ("subscribe", "cancel", "renew"):
                        await _subscription_step(uow, principal, kind, other[1])
                    elif kind == "settle":
                        assert isinstance(value, Decimal)
                        await _settle(uow, people[who], other, value)
                    else:
                        assert isinstance(value, Decimal)
                        await wallets.transfer(
                            uow,
                            None,
                            principal,
                            portfolio_id,
                            value,
                            to_portfolio=kind == "to_portfolio",
                        )
            except PapertradeError as refused:
                # refused (insufficient funds, unchanged tier…): nothing may change
                outcome = refused.code
            else:
                outcome = "done"
                if kind in FROM_OUTSIDE:
                    assert isinstance(value, Decimal)
                    outside += value
                elif kind == "top_up":
                    assert isinstance(value, Decimal)
                    paper += value
            if kind == "from_portfolio":  # out of a portfolio is always refused
                assert outcome == "portfolio_money_is_paper"
            await _check(ctx, user_ids, portfolio_ids, outside, paper)
    finally:
        await ctx.close()


async def _subscription_step(
    uow: AsyncWork, principal: Principal, kind: str, portfolio_id: int
) -> None:
    """Subscribe (paid) to another's portfolio, cancel, or renew a period that has run out
    (its end moved to now: what the renewal job finds 30 days later)."""
    if kind == "subscribe":
        body = SubscribeBody(portfolio_id=portfolio_id, tier="paid")
        await subscriptions.subscribe(uow, principal, body)
        return
    mine = list(await subscriptions.mine(uow.session, principal.user_id))
    if not mine:
        return
    if kind == "cancel":
        await subscriptions.cancel(uow, principal.user_id, mine[0].id)
        return
    if mine[0].current_period_end is not None:
        mine[0].current_period_end = uow.now() - 1
    await subscriptions.renew(uow, mine[0].id)


async def _settle(
    uow: AsyncWork, follower: tuple[int, int], leader: tuple[int, int], pnl: Decimal
) -> None:
    """A copy relation whose copied trades made `pnl`, settled: the revenue share leaves the
    follower's portfolio for the leader's (paper; never a wallet)."""
    relation = CopyRelation(
        leader_portfolio_id=leader[1],
        leader_user_id=leader[0],
        follower_portfolio_id=follower[1],
        follower_user_id=follower[0],
        mode="fixed_ratio",
        allocation=Decimal(50),
        profit_share_pct=Decimal(10),
        status="ended",
        start_event_id=0,
        cum_net_pnl=pnl,
    )
    uow.session.add(relation)
    await uow.session.flush()
    await copytrading.settle(uow, relation, "unfollow")


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(steps=STEPS)
def test_money_is_conserved_over_random_sequences(
    wapp: FastAPI, wallet_settings: Settings, steps: list[tuple[str, int, int, object]]
) -> None:
    asyncio.run(_run(wallet_settings, steps))


async def test_two_payments_racing_on_one_wallet_never_overdraw_it(
    member: Member, wapp: FastAPI, fake: FakeTronGrid, wallet_settings: Settings
) -> None:
    """20 USDT, two 15 USDT tier payments at once from two contexts (two processes' worth of
    connections on PostgreSQL): exactly one is paid."""
    await fund(wapp, fake, member, "20")
    other = AppContext.build(wallet_settings) if PG_URL else wapp.state.ctx

    async def pay(ctx: AppContext) -> str:
        try:
            async with ctx.transaction() as uow:
                await wallets.pay(uow, member.id, LedgerKind.TIER_PAYMENT, Decimal(15), actor="t")
        except PapertradeError as exc:
            return exc.code
        return "paid"

    try:
        outcomes = await asyncio.gather(pay(wapp.state.ctx), pay(other))
    finally:
        if other is not wapp.state.ctx:
            await other.close()
    assert sorted(outcomes) == ["insufficient_funds", "paid"]
    assert await balance(member) == Decimal(5)


async def test_two_watchers_never_credit_one_transfer_twice(
    member: Member, wapp: FastAPI, fake: FakeTronGrid, wallet_settings: Settings
) -> None:
    response = await member.post("/v1/recharge/orders", json={"amount": "42"})
    fake.add(Decimal(str(response.json()["pay_amount"])))
    other = AppContext.build(wallet_settings) if PG_URL else wapp.state.ctx
    try:
        await asyncio.gather(watch_once(wapp.state.ctx), watch_once(other))
    finally:
        if other is not wapp.state.ctx:
            await other.close()
    assert await balance(member) == Decimal(42)
    kinds = [row["kind"] for row in (await member.get("/v1/user/wallet/ledger")).json()]
    assert kinds == ["recharge"]


async def test_orders_created_at_once_never_share_a_pay_amount(
    member: Member, wapp: FastAPI, wallet_settings: Settings
) -> None:
    other = AppContext.build(wallet_settings) if PG_URL else wapp.state.ctx

    async def create(ctx: AppContext) -> Decimal:
        async with ctx.transaction() as uow:
            made = await recharges.create(
                uow,
                member.id,
                Decimal(606),
                addresses=wallet_settings.recharge_addresses,
                expiry_ms=60_000,
            )
            return made.pay_amount

    try:
        amounts = await asyncio.gather(*(create(c) for c in [wapp.state.ctx, other] * 3))
    finally:
        if other is not wapp.state.ctx:
            await other.close()
    assert sorted(amounts) == [Decimal("606") + Decimal("0.01") * k for k in range(6)]
