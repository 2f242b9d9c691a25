"""A database written by the release before this one upgrades in place: its users sign in, their
API keys work, balances, ledgers and orders are as they were, and resting orders still rest."""

from decimal import Decimal

from sqlalchemy.ext.asyncio import AsyncSession, create_async_engine

from papertrade.config import Settings
from papertrade.keys import service as keys
from papertrade.kit.security import hash_password
from papertrade.models import LedgerEntry, Order, Portfolio, User
from papertrade.uow import UnitOfWork
from tests.conftest import bearer, client_for, running_app
from tests.foundation.test_email_case import _migrate

PREVIOUS_RELEASE = "0004"  # the newest revision of the release before this one
PASSWORD = "an-old-account-pass"
BALANCE = Decimal("12345.678901")


async def _write_as_the_previous_release(url: str) -> tuple[str, int, int]:
    """(API key, portfolio id, resting order id) in a database at PREVIOUS_RELEASE."""
    engine = create_async_engine(url)
    try:
        await _migrate(engine, PREVIOUS_RELEASE)
        async with AsyncSession(engine, expire_on_commit=False) as session, session.begin():
            user = User(email="old@example.com", password_hash=hash_password(PASSWORD))
            session.add(user)
            await session.flush()
            uow = UnitOfWork(session)
            _, key = await keys.create(uow, user.id, "from the old release", "write")
            portfolio = Portfolio(
                user_id=user.id,
                name="kept",
                initial_balance=BALANCE,
                balance=BALANCE,
                maker_fee_rate=Decimal("0.0002"),
                taker_fee_rate=Decimal("0.0005"),
            )
            session.add(portfolio)
            await session.flush()
            session.add(
                LedgerEntry(
                    portfolio_id=portfolio.id,
                    kind="deposit",
                    amount=BALANCE,
                    balance_after=BALANCE,
                    note="initial balance",
                )
            )
            order = Order(
                portfolio_id=portfolio.id,
                symbol="BTCUSDT",
                side="buy",
                type="limit",
                action="open",
                time_in_force="GTC",
                status="new",
                is_open=True,
                quantity=Decimal("0.002"),
                size_usd=Decimal("60"),
                price=Decimal("30000"),
                client_order_id="kept-resting",
                reserved_margin=Decimal("3"),
            )
            session.add(order)
            await session.flush()
            return key, portfolio.id, order.id
    finally:
        await engine.dispose()


async def test_a_database_of_the_previous_release_upgrades_in_place(
    isolated_settings: Settings,
) -> None:
    key, pid, resting = await _write_as_the_previous_release(isolated_settings.database_url)
    async with running_app(isolated_settings) as app, client_for(app) as client:  # migrates
        signed_in = await client.post(
            "/v1/auth/login", json={"email": "OLD@example.com", "password": PASSWORD}
        )
        assert signed_in.status_code == 200, signed_in.text
        portfolio = (await client.get(f"/v1/portfolios/{pid}", headers=bearer(key))).json()
        assert portfolio["balance"] == float(BALANCE)
        ledger = (await client.get(f"/v1/portfolios/{pid}/ledger", headers=bearer(key))).json()
        assert [(e["kind"], e["amount"]) for e in ledger] == [("deposit", float(BALANCE))]
        order = (await client.get(f"/v1/order/{resting}", headers=bearer(key))).json()
        assert (order["status"], order["client_order_id"]) == ("new", "kept-resting")
        assert resting in app.state.engine.books.book("BTCUSDT")  # it still rests
        # And the upgraded database takes new work: a top-up through the one ledger.
        topped = await client.post(
            f"/v1/portfolios/{pid}/top-up", json={"amount": "1"}, headers=bearer(key)
        )
        assert topped.json()["balance"] == float(BALANCE + 1)
