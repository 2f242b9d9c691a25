"""An account written into a database at an older revision, as that release left it, for the
tests of in-place upgrades: a user with a key and one portfolio, columns of that revision only."""

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession

from papertrade.keys import service as keys
from papertrade.kit.security import hash_password
from papertrade.models import User
from papertrade.uow import UnitOfWork
from tests.foundation.test_email_case import _migrate

SCALE = 10**8  # DecimalType keeps units of 10^-8


async def old_account(
    engine: AsyncEngine, revision: str, email: str, balance: int, scope: str = "write"
) -> tuple[str, int]:
    """Migrate to `revision`, then write the user, a native key and a portfolio holding
    `balance` USDT; the key and the portfolio's id."""
    await _migrate(engine, revision)
    async with AsyncSession(engine, expire_on_commit=False) as session, session.begin():
        user = User(email=email, password_hash=hash_password("a-long-pass-1"))
        session.add(user)
        await session.flush()
        _, key = await keys.create(UnitOfWork(session), user.id, "old", scope)
        uid = user.id
    async with engine.begin() as connection:
        pid = (
            await connection.execute(
                text(
                    "INSERT INTO portfolios (user_id, name, description, visibility, "
                    "initial_balance, balance, maker_fee_rate, taker_fee_rate, created_at, "
                    "updated_at) VALUES (:u, 'old', '', 'private', :b, :b, 20000, 50000, 1, 1) "
                    "RETURNING id"
                ),
                {"u": uid, "b": balance * SCALE},
            )
        ).scalar_one()
    return key, int(pid)
