"""The trading state of the portfolios a unit of work places orders in, loaded once.

A group commit (orders/writer.py) places many orders in one unit of work. Loading each portfolio
(locked on PostgreSQL), its positions, the margin its resting orders reserve and the client order
ids it already uses once for the whole group, and keeping them current in memory as the group's
orders go in, is what turns a dozen queries per order into a handful per group. On SQLite the
writer thread keeps these states from one group to the next for as long as nobody else writes
(db.Database._remembered), so a busy portfolio is read once, not once per group.
"""

from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import Decimal

from sqlalchemy import and_, bindparam, or_, select
from sqlalchemy.orm import Session

from papertrade.db import CURRENT
from papertrade.kit.dbtypes import decimal_sum
from papertrade.kit.decimals import ZERO
from papertrade.models import Order, Portfolio, Position
from papertrade.orders.record import AnyOrder
from papertrade.uow import AnyWork, SyncWork

_REMEMBERED_AT_MOST = 10_000  # portfolios; past that the memory starts again
# Which of one portfolio's client order ids are taken, through the unique index. Built once and
# run on the connection: the ORM's per-statement work cost more than the lookup itself.
_TAKEN_CLIENT_IDS = select(Order.portfolio_id, Order.client_order_id).where(
    Order.portfolio_id == bindparam("pid"),
    Order.client_order_id.in_(bindparam("cids", expanding=True)),
)


@dataclass(slots=True)
class PortfolioState:
    portfolio: Portfolio
    positions: dict[str, Position]
    open_margin: Decimal  # reserved by resting orders, those placed in this unit of work included
    taken_client_ids: set[str] = field(default_factory=set)
    checked_client_ids: set[str] = field(default_factory=set)


class Workset(dict[int, PortfolioState]):
    """The portfolios a unit of work has loaded, by id (a part of the unit of work); the
    writer thread's memory keeps one as well (see load)."""

    trading_rows = True  # its writes make the SQLite order writer forget (UnitOfWork)


def load(
    uow: SyncWork,
    portfolio_ids: Iterable[int],
    client_ids: Iterable[tuple[int, str]] = (),
) -> None:
    """Load the portfolios not yet loaded in this unit of work, and check client order ids.

    Portfolios are locked in id order, so two processes loading overlapping groups on PostgreSQL
    wait for each other instead of deadlocking.
    """
    session = uow.session
    states = uow.part(Workset)
    # Membership, not `set - states.keys()`: that walks every loaded portfolio, and place_all
    # calls this once per order (10,000 orders of 1,000 portfolios: 10 million steps).
    missing = sorted({pid for pid in portfolio_ids if pid not in states})
    remembered = uow.memory.part(Workset) if uow.memory is not None else None
    if remembered is not None and missing:
        for pid in missing:
            if (state := remembered.get(pid)) is not None:
                states[pid] = _attach(session, state)
        missing = [pid for pid in missing if pid not in states]
    if missing:
        portfolios = session.scalars(
            select(Portfolio)
            .where(Portfolio.id.in_(missing))
            .order_by(Portfolio.id)
            .with_for_update()
            .execution_options(**CURRENT)
        )
        positions: dict[int, dict[str, Position]] = {pid: {} for pid in missing}
        held = select(Position).where(Position.portfolio_id.in_(missing))
        for position in session.scalars(held.execution_options(**CURRENT)):
            # Keyed as positions.service.position_key: the symbol itself in one-way mode.
            side = position.position_side
            key = position.symbol if side == "BOTH" else f"{position.symbol}:{side}"
            positions[position.portfolio_id][key] = position
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
        if remembered is not None:
            if len(remembered) + len(missing) > _REMEMBERED_AT_MOST:
                remembered.clear()
            remembered.update((pid, states[pid]) for pid in missing if pid in states)
    unchecked = {
        (pid, cid)
        for pid, cid in client_ids
        if pid in states and cid not in states[pid].checked_client_ids
    }
    if unchecked:
        by_portfolio: dict[int, list[str]] = {}
        for pid, cid in unchecked:
            by_portfolio.setdefault(pid, []).append(cid)
        for pid, cid in _taken(session, by_portfolio):
            states[pid].taken_client_ids.add(cid)
        for pid, cid in unchecked:
            states[pid].checked_client_ids.add(cid)


def _taken(session: Session, by_portfolio: dict[int, list[str]]) -> Iterable[tuple[int, str]]:
    """The (portfolio, client order id) pairs asked about that are already used."""
    connection = session.connection()
    if len(by_portfolio) == 1:  # the usual group: one busy account
        ((pid, cids),) = by_portfolio.items()
        return connection.execute(_TAKEN_CLIENT_IDS, {"pid": pid, "cids": cids})
    # One (portfolio_id = ? AND client_order_id IN (…)) per portfolio, not a row-value IN:
    # SQLite answers the row-value form by scanning the whole index, every order ever placed.
    return connection.execute(
        select(Order.portfolio_id, Order.client_order_id).where(
            or_(
                *(
                    and_(Order.portfolio_id == pid, Order.client_order_id.in_(cids))
                    for pid, cids in by_portfolio.items()
                )
            )
        )
    )


def _attach(session: Session, state: PortfolioState) -> PortfolioState:
    """Bring a remembered state into this unit of work: its rows are tracked again (no query)."""
    session.add(state.portfolio)
    session.add_all(state.positions.values())
    state.taken_client_ids = set()  # client order ids are checked against the database again
    state.checked_client_ids = set()
    return state


def get(uow: AnyWork, portfolio_id: int) -> PortfolioState | None:
    """The loaded state of a portfolio, or None when it does not exist."""
    return uow.part(Workset).get(portfolio_id)


def release_margin(uow: AnyWork, order: AnyOrder) -> None:
    """Keep a loaded portfolio's reserved margin current when one of its orders stops resting."""
    state = uow.part(Workset).get(order.portfolio_id)
    if state is not None:
        state.open_margin -= order.reserved_margin
