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

from papertrade.auth.principal import Principal
from papertrade.ledger.service import post
from papertrade.models import Portfolio
from papertrade.orders import workset
from papertrade.portfolios import service as portfolio_service
from papertrade.trading.enums import LedgerKind
from tests.conftest import PG_URL, User
from tests.trading_api.helpers import market, set_price
from tests.trading_api.test_ledger_adds_up import _assert_adds_up

SHARE = Decimal(1)


async def _by_get_owned(uow: Any, user: User, portfolio_id: int) -> Portfolio:
    """What a request, the wallet's transfer or a webhook takes."""
    principal = Principal(kind="session", user_id=user.id, credential_id=0)
    return await portfolio_service.get_owned(uow.session, principal, portfolio_id, for_update=True)


async def _by_workset(uow: Any, user: User, portfolio_id: int) -> Portfolio:
    """What the order path takes: the copy mirror's orders for a follower, say."""

    def load(session: Any) -> Portfolio:
        work = uow.on(session)
        workset.load(work, [portfolio_id])
        state = workset.get(work, portfolio_id)
        assert state is not None
        return state.portfolio

    return await uow.session.run_sync(load)  # type: ignore[no-any-return]


@pytest.mark.skipif(PG_URL is None, reason="SQLite's unit of work holds the one write lock")
@pytest.mark.parametrize("lock", [_by_get_owned, _by_workset], ids=["get_owned", "workset"])
async def test_a_portfolio_locked_after_an_unlocked_read_is_booked_on_its_current_balance(
    app: FastAPI, user: User, lock: Any
) -> None:
    pid = (await user.portfolio(name="busy", initial_balance="10000"))["id"]
    await set_price(app, "BTCUSDT", "50000")
    async with app.state.ctx.transaction() as uow:
        read = await uow.session.get(Portfolio, pid)  # as an outbox consumer reads it
        assert read is not None and read.balance == Decimal(10000)
        await market(user, pid, "BTCUSDT", "buy", "0.01")  # commits a fee meanwhile
        locked = await lock(uow, user, pid)
        assert locked is read  # the session's one object for the row, now current
        paid = Decimal(10000) - locked.balance
        assert Decimal(0) < paid < Decimal(1)  # the order's fee, not the earlier read
        post(uow, locked, LedgerKind.PROFIT_SHARE, SHARE, note="booked on the locked row")
    shown = Decimal(str((await user.get(f"/v1/portfolios/{pid}")).json()["balance"]))
    assert shown == Decimal(10000) - paid + SHARE  # neither the fee nor the share lost
    await _assert_adds_up(user, pid)
