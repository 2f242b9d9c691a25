"""Funding settlements already applied, so no funding time is ever charged twice."""

from decimal import Decimal

from sqlalchemy import BigInteger, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from papertrade.db import Base
from papertrade.kit.dbtypes import DecimalType
from papertrade.models.base import created_at_column


class FundingSettlement(Base):
    __tablename__ = "funding_settlements"
    __table_args__ = (UniqueConstraint("symbol", "funding_time"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    symbol: Mapped[str] = mapped_column(String(30))
    funding_time: Mapped[int] = mapped_column(BigInteger)
    funding_rate: Mapped[Decimal] = mapped_column(DecimalType)
    mark_price: Mapped[Decimal] = mapped_column(DecimalType)
    created_at: Mapped[int] = created_at_column()
