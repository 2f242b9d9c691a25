"""The trading state of the portfolios a unit of work places orders in, loaded once.

A group commit (orders/writer.py) places many orders in one unit of work. Loading each portfolio
(locked on PostgreSQL), its positions, the margin its resting orders reserve and the client order
ids it already uses once for the whole group, and keeping them current in memory as the group's
orders go in, is what turns a dozen queries per order into a handful per group.
"""

from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import Decimal

from sqlalchemy import and_, or_, select
from sqlalchemy.orm import Session

from papertrade.db import AnySession
from papertrade.kit.dbtypes import decimal_sum
from papertrade.kit.decimals import ZERO
from papertrade.models import Order, Portfolio, Position
from papertrade.orders.record import AnyOrder

_KEY = "portfolio_states"


@dataclass(slots=True)
class PortfolioState:
    portfolio: Portfolio
    positions: dict[str, Position]
    open_margin: Decimal  # reserved by resting orders, those placed in this unit of work included
    taken_client_ids: set[str] = field(default_factory=set)
    checked_client_ids: set[str] = field(default_factory=set)


def _states(session: AnySession) -> dict[int, PortfolioState]:
    states: dict[int, PortfolioState] = session.info.setdefault(_KEY, {})
    return states


def load(
    session: Session,
    portfolio_ids: Iterable[int],
    client_ids: Iterable[tuple[int, str]] = (),
) -> None:
    """Load the portfolios not yet loaded in this unit of work, and check client order ids.

    Portfolios are locked in id order, so two processes loading overlapping groups on PostgreSQL
    wait for each other instead of deadlocking.
    """
    states = _states(session)
    missing = sorted(set(portfolio_ids) - states.keys())
    if missing:
        portfolios = session.scalars(
            select(Portfolio)
            .where(Portfolio.id.in_(missing))
            .order_by(Portfolio.id)
            .with_for_update()
        )
        positions: dict[int, dict[str, Position]] = {pid: {} for pid in missing}
        for position in session.scalars(select(Position).where(Position.portfolio_id.in_(missing))):
            positions[position.portfolio_id][position.symbol] = position
        totals = session.execute(
            select(Order.portfolio_id, decimal_sum(Order.reserved_margin))
            .where(Order.portfolio_id.in_(missing), Order.is_open.is_(True))
            .group_by(Order.portfolio_id)
        )
        reserved = dict(totals.all())
        for portfolio in portfolios:
            states[portfolio.id] = PortfolioState(
                portfolio, positions[portfolio.id], reserved.get(portfolio.id, ZERO)
            )
    unchecked = {
        (pid, cid)
        for pid, cid in client_ids
        if pid in states and cid not in states[pid].checked_client_ids
    }
    if unchecked:
        by_portfolio: dict[int, list[str]] = {}
        for pid, cid in unchecked:
            by_portfolio.setdefault(pid, []).append(cid)
        # One (portfolio_id = ? AND client_order_id IN (…)) per portfolio, not a row-value IN:
        # SQLite answers the row-value form by scanning the whole index, every order ever placed.
        taken = session.execute(
            select(Order.portfolio_id, Order.client_order_id).where(
                or_(
                    *(
                        and_(Order.portfolio_id == pid, Order.client_order_id.in_(cids))
                        for pid, cids in by_portfolio.items()
                    )
                )
            )
        )
        for pid, cid in taken:
            states[pid].taken_client_ids.add(cid)
        for pid, cid in unchecked:
            states[pid].checked_client_ids.add(cid)


def get(session: AnySession, portfolio_id: int) -> PortfolioState | None:
    """The loaded state of a portfolio, or None when it does not exist."""
    return _states(session).get(portfolio_id)


def release_margin(session: AnySession, order: AnyOrder) -> None:
    """Keep a loaded portfolio's reserved margin current when one of its orders stops resting."""
    state = _states(session).get(order.portfolio_id)
    if state is not None:
        state.open_margin -= order.reserved_margin
