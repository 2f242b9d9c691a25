"""A row locked in a unit of work is the row as it is now, even when the unit of work read it
before without a lock (the ORM kept that read's values in the object it hands back).

An outbox round reads portfolios without a lock (the subscriptions' consumer, the copy mirror's
leader) and later locks some of them to book money (a follower's copy, a revenue share). Another
transaction may change the balance in between: a balance booked on the earlier values undid
that transaction's change (money made or lost on PostgreSQL)."""

from decimal import Decimal
from typing import Any

import pytest
from fastapi import FastAPI
from sqlalchemy import select

from papertrade.ledger.service import post
from papertrade.models import Portfolio
from papertrade.trading.enums import LedgerKind
from tests.conftest import PG_URL, User
from tests.trading_api.helpers import market, set_price
from tests.trading_api.test_ledger_adds_up import _assert_adds_up

SHARE = Decimal(1)


async def _by_select(session: Any, portfolio_id: int) -> Portfolio:
    found = await session.scalars(
        select(Portfolio).where(Portfolio.id == portfolio_id).with_for_update()
    )
    return found.one()  # type: ignore[no-any-return]


async def _by_get(session: Any, portfolio_id: int) -> Portfolio:
    found = await session.get(Portfolio, portfolio_id, with_for_update=True)
    assert found is not None
    return found  # type: ignore[no-any-return]


@pytest.mark.skipif(PG_URL is None, reason="SQLite's unit of work holds the one write lock")
@pytest.mark.parametrize("lock", [_by_select, _by_get], ids=["select", "get"])
async def test_a_portfolio_locked_after_an_unlocked_read_is_booked_on_its_current_balance(
    app: FastAPI, user: User, lock: Any
) -> None:
    pid = (await user.portfolio(name="busy", initial_balance="10000"))["id"]
    await set_price(app, "BTCUSDT", "50000")
    async with app.state.ctx.transaction() as uow:
        read = await uow.session.get(Portfolio, pid)  # as an outbox consumer reads it
        assert read is not None and read.balance == Decimal(10000)
        await market(user, pid, "BTCUSDT", "buy", "0.01")  # commits a fee meanwhile
        locked = await lock(uow.session, pid)
        assert locked is read  # the session's one object for the row, now current
        paid = Decimal(10000) - locked.balance
        assert Decimal(0) < paid < Decimal(1)  # the order's fee, not the earlier read
        post(uow, locked, LedgerKind.PROFIT_SHARE, SHARE, note="booked on the locked row")
    shown = Decimal(str((await user.get(f"/v1/portfolios/{pid}")).json()["balance"]))
    assert shown == Decimal(10000) - paid + SHARE  # neither the fee nor the share lost
    await _assert_adds_up(user, pid)
