"""Money columns keep every amount exact through the real database, and refuse what they cannot
keep exactly (a float, a ninth decimal) before anything is written."""

from decimal import Decimal

import pytest
from fastapi import FastAPI
from sqlalchemy import select, update
from sqlalchemy.exc import StatementError

from papertrade.kit.dbtypes import decimal_sum
from papertrade.models import Portfolio
from tests.conftest import User

EDGES = [
    Decimal("0.00000001"),
    Decimal("-0.00000001"),
    Decimal("92233720368.54775807"),  # the largest BIGINT in units of 10^-8
    Decimal("-92233720368.54775808"),
    Decimal("1E+3"),
    Decimal("60000.12345678"),
    Decimal(7),
]


async def test_amounts_round_trip_exactly_and_sum_exactly(app: FastAPI, user: User) -> None:
    ids = [(await user.portfolio())["id"] for _ in range(2)]
    ctx = app.state.ctx
    for amount in EDGES:
        async with ctx.transaction() as uow:
            session = uow.session
            await session.execute(
                update(Portfolio).where(Portfolio.id == ids[0]).values(balance=amount)
            )
            await session.execute(
                update(Portfolio).where(Portfolio.id == ids[1]).values(balance=Decimal("0.1"))
            )
        async with ctx.db.reader() as session:
            stored = await session.scalar(select(Portfolio.balance).where(Portfolio.id == ids[0]))
            if amount < 10**9:  # the sum of the two must fit the column too
                total = await session.scalar(
                    select(decimal_sum(Portfolio.balance)).where(Portfolio.id.in_(ids))
                )
                assert total == amount + Decimal("0.1")
        assert stored == amount and isinstance(stored, Decimal)


@pytest.mark.parametrize(
    ("value", "error"), [(1.5, TypeError), (Decimal("0.000000001"), ValueError)]
)
async def test_an_amount_that_cannot_be_kept_exactly_is_refused(
    app: FastAPI, user: User, value: object, error: type[Exception]
) -> None:
    pid = (await user.portfolio())["id"]
    ctx = app.state.ctx
    with pytest.raises(StatementError) as refused:
        async with ctx.transaction() as uow:
            await uow.session.execute(
                update(Portfolio).where(Portfolio.id == pid).values(balance=value)
            )
    assert isinstance(refused.value.orig, error)
    async with ctx.db.reader() as session:
        assert await session.scalar(select(Portfolio.balance).where(Portfolio.id == pid)) > 0
