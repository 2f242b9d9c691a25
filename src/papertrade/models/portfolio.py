"""Portfolios: a USDT wallet with positions, owned by one user."""

from decimal import Decimal

from sqlalchemy import BigInteger, ForeignKey, String, false
from sqlalchemy.orm import Mapped, mapped_column

from papertrade.db import Base
from papertrade.kit.dbtypes import DecimalType
from papertrade.kit.ids import is_id
from papertrade.models.base import created_at_column, updated_at_column

CODE_PREFIX = "P"
CODE_DIGITS = 7


class Portfolio(Base):
    __tablename__ = "portfolios"
    # Columns with only a server default are not read back after an insert (no RETURNING of
    # them), so rows can still be written through this model into an older schema (tests of
    # in-place upgrades); code that needs such a column after creating a row sets it.
    __mapper_args__ = {"eager_defaults": False}  # noqa: RUF012 (SQLAlchemy reads it)

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(100))
    description: Mapped[str] = mapped_column(String(2000), default="")
    visibility: Mapped[str] = mapped_column(String(10), default="private")
    initial_balance: Mapped[Decimal] = mapped_column(DecimalType)
    balance: Mapped[Decimal] = mapped_column(DecimalType)
    maker_fee_rate: Mapped[Decimal] = mapped_column(DecimalType)
    taker_fee_rate: Mapped[Decimal] = mapped_column(DecimalType)
    # Hedge mode (Binance's dualSidePosition): a LONG and a SHORT position per symbol. A server
    # default only (read back on insert), so rows written as an older release wrote them work.
    dual_side_position: Mapped[bool] = mapped_column(server_default=false())
    # Realism profile (trading/realism.py): "mark" fills at the mark, "realistic" models depth.
    # No Python default: a row written without it (older code, raw inserts) gets the server's.
    realism: Mapped[str] = mapped_column(String(10), server_default="mark")
    created_at: Mapped[int] = created_at_column()
    updated_at: Mapped[int] = updated_at_column()
    deleted_at: Mapped[int | None] = mapped_column(BigInteger, default=None)

    @property
    def code(self) -> str:
        return code_of(self.id)


def code_of(portfolio_id: int) -> str:
    """The short code of a portfolio (its public page is /p/<code>)."""
    return f"{CODE_PREFIX}{portfolio_id:0{CODE_DIGITS}d}"


def id_from_code(code: str) -> int | None:
    """The portfolio id a short code names, or None when it is not a code."""
    prefix, digits = code[:1], code[1:]
    if prefix.upper() != CODE_PREFIX or not (digits.isascii() and digits.isdigit()):
        return None
    number = int(digits) if len(digits) <= 19 else 0  # as before: no int() of a huge string
    return number if is_id(number) else None  # past the id column's range: names nothing
