"""post(): the only function that changes a balance, and always with a ledger row beside it.

Every amount is booked at the 6 decimals the ledger lists, when it is written, and the balance
moves by exactly that amount: the listed ledger always adds up to the balance, and each row's
balance_after is the previous one plus its amount. A walk over the source
(tests/foundation/test_backbone.py) keeps every other module from assigning a balance.
A user's wallet (docs/wallet.md) is booked the same way by post_wallet, which also refuses to
overdraw it.
"""

from decimal import Decimal
from typing import Any, cast

from sqlalchemy import Table, insert
from sqlalchemy.orm import Session

from papertrade.errors import Conflict
from papertrade.kit.decimals import usdt6
from papertrade.models import LedgerEntry, Portfolio, Wallet, WalletEntry
from papertrade.trading.enums import LedgerKind
from papertrade.uow import AnyWork

_LEDGER = cast(Table, LedgerEntry.__table__)


class LedgerRows:
    """The unit of work's new ledger rows, inserted with one executemany before it commits."""

    trading_rows = True  # its writes make the SQLite order writer forget (UnitOfWork)

    __slots__ = ("rows",)

    def __init__(self) -> None:
        self.rows: list[dict[str, Any]] = []

    def before_commit(self, session: Session) -> None:
        if self.rows:
            session.flush()  # the portfolios the rows belong to
            session.connection().execute(insert(_LEDGER), self.rows)
            self.rows = []


def post(
    uow: AnyWork,
    portfolio: Portfolio,
    kind: LedgerKind,
    amount: Decimal,
    *,
    symbol: str | None = None,
    order_id: int | None = None,
    note: str = "",
) -> Decimal:
    """Change `portfolio`'s balance by `amount` (at 6 decimals) and record why; returns the
    amount booked. The portfolio must be loaded in this unit of work, locked on PostgreSQL."""
    booked = usdt6(amount)
    portfolio.balance = portfolio.balance + booked
    uow.part(LedgerRows).rows.append(
        {
            "portfolio_id": portfolio.id,
            "kind": kind.value,
            "amount": booked,
            "balance_after": portfolio.balance,
            "symbol": symbol,
            "order_id": order_id,
            "note": note,
            "created_at": uow.now(),
        }
    )
    return booked


class InsufficientFunds(Conflict):
    code = "insufficient_funds"


def post_wallet(
    uow: AnyWork,
    wallet: Wallet,
    kind: LedgerKind,
    amount: Decimal,
    *,
    actor: str,
    portfolio_id: int | None = None,
    reference: str | None = None,
    note: str = "",
) -> Decimal:
    """Change `wallet`'s balance by `amount` (at 6 decimals, as post) and record why and who did
    it; returns the amount booked. A debit larger than the balance is refused: a wallet is never
    overdrawn. The wallet must be loaded in this unit of work, locked on PostgreSQL, so that two
    payments racing on it are serialised here."""
    booked = usdt6(amount)
    if wallet.balance + booked < 0:
        raise InsufficientFunds(
            f"The wallet holds {usdt6(wallet.balance)} USDT; {-booked} USDT is needed. "
            "Recharge it first (docs/wallet.md)."
        )
    wallet.balance = wallet.balance + booked
    uow.session.add(
        WalletEntry(
            wallet_id=wallet.id,
            kind=kind.value,
            amount=booked,
            balance_after=wallet.balance,
            portfolio_id=portfolio_id,
            reference=reference,
            actor=actor,
            note=note,
            created_at=uow.now(),
        )
    )
    return booked
