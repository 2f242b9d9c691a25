"""Copy trading: who copies whom and how, each mirrored (or skipped) leader fill, each
revenue-share settlement, and each leader's profit-share percentage (docs/social.md)."""

from decimal import Decimal

from sqlalchemy import BigInteger, ForeignKey, Index, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from papertrade.db import Base
from papertrade.kit.dbtypes import DecimalType
from papertrade.models.base import created_at_column


class CopyLeader(Base):
    """A leader portfolio's copy terms; a public portfolio without a row shares 10 % into
    itself."""

    __tablename__ = "copy_leaders"

    portfolio_id: Mapped[int] = mapped_column(
        ForeignKey("portfolios.id", ondelete="CASCADE"), primary_key=True
    )
    profit_share_pct: Mapped[Decimal] = mapped_column(DecimalType)
    # The leader's portfolio that receives the (paper) profit shares; None: this one itself.
    payout_portfolio_id: Mapped[int | None] = mapped_column(
        ForeignKey("portfolios.id", ondelete="SET NULL"), default=None
    )
    updated_at: Mapped[int] = created_at_column()


class CopyRelation(Base):
    __tablename__ = "copy_relations"
    __table_args__ = (
        Index("ix_copy_relations_leader", "leader_portfolio_id", "status"),
        Index("ix_copy_relations_follower", "follower_user_id", "id"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    leader_portfolio_id: Mapped[int] = mapped_column(
        ForeignKey("portfolios.id", ondelete="CASCADE")
    )
    leader_user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    follower_portfolio_id: Mapped[int] = mapped_column(
        ForeignKey("portfolios.id", ondelete="CASCADE"), index=True
    )
    follower_user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    mode: Mapped[str] = mapped_column(String(12))  # fixed_amount | fixed_ratio | multiplier
    allocation: Mapped[Decimal] = mapped_column(DecimalType)
    amount: Mapped[Decimal | None] = mapped_column(DecimalType, default=None)  # fixed_amount
    multiplier: Mapped[Decimal | None] = mapped_column(DecimalType, default=None)
    leverage: Mapped[int | None] = mapped_column(default=None)  # None: follow the leader
    max_order_margin: Mapped[Decimal | None] = mapped_column(DecimalType, default=None)
    stop_pct: Mapped[Decimal | None] = mapped_column(DecimalType, default=None)
    slippage_pct: Mapped[Decimal | None] = mapped_column(DecimalType, default=None)
    symbols: Mapped[str] = mapped_column(Text, default="")  # comma-separated; "": every symbol
    profit_share_pct: Mapped[Decimal] = mapped_column(DecimalType)  # fixed when following
    status: Mapped[str] = mapped_column(String(8))  # active | paused | ended
    # Only leader fills whose outbox event comes after this one are copied.
    start_event_id: Mapped[int] = mapped_column(BigInteger)
    cum_net_pnl: Mapped[Decimal] = mapped_column(DecimalType, default=Decimal(0))
    hwm: Mapped[Decimal] = mapped_column(DecimalType, default=Decimal(0))
    fees_paid: Mapped[Decimal] = mapped_column(DecimalType, default=Decimal(0))
    settled_week: Mapped[int] = mapped_column(BigInteger, default=0)  # ms of the Monday settled
    end_reason: Mapped[str | None] = mapped_column(String(12), default=None)
    created_at: Mapped[int] = created_at_column()
    ended_at: Mapped[int | None] = mapped_column(BigInteger, default=None)


class CopyTrade(Base):
    """One leg of a leader fill for one relation: copied (with the follower's order) or skipped
    (with the reason). Unique per (relation, leader order, leg): a copy happens once."""

    __tablename__ = "copy_trades"
    __table_args__ = (
        UniqueConstraint(
            "relation_id",
            "leader_order_id",
            "leg",
            name="uq_copy_trades_relation_id_leader_order_id_leg",  # as 0014 made it
        ),
        Index("ix_copy_trades_relation", "relation_id", "id"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    relation_id: Mapped[int] = mapped_column(ForeignKey("copy_relations.id", ondelete="CASCADE"))
    leader_order_id: Mapped[int] = mapped_column(BigInteger)
    leg: Mapped[str] = mapped_column(String(5))  # open | close
    symbol: Mapped[str] = mapped_column(String(30))
    side: Mapped[str] = mapped_column(String(4))
    leader_price: Mapped[Decimal] = mapped_column(DecimalType)
    leader_quantity: Mapped[Decimal] = mapped_column(DecimalType)
    status: Mapped[str] = mapped_column(String(8))  # copied | skipped
    reason: Mapped[str | None] = mapped_column(String(20), default=None)
    detail: Mapped[str] = mapped_column(String(300), default="")
    follower_order_id: Mapped[int | None] = mapped_column(BigInteger, default=None, index=True)
    quantity: Mapped[Decimal] = mapped_column(DecimalType, default=Decimal(0))
    price: Mapped[Decimal | None] = mapped_column(DecimalType, default=None)
    realized_pnl: Mapped[Decimal] = mapped_column(DecimalType, default=Decimal(0))
    commission: Mapped[Decimal] = mapped_column(DecimalType, default=Decimal(0))
    created_at: Mapped[int] = created_at_column()


class CopySettlement(Base):
    """A revenue-share event: the inputs and the fee, so anyone can recompute it."""

    __tablename__ = "copy_settlements"
    __table_args__ = (Index("ix_copy_settlements_relation", "relation_id", "id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    relation_id: Mapped[int] = mapped_column(ForeignKey("copy_relations.id", ondelete="CASCADE"))
    leader_user_id: Mapped[int] = mapped_column(BigInteger, index=True)
    follower_user_id: Mapped[int] = mapped_column(BigInteger, index=True)
    reason: Mapped[str] = mapped_column(String(8))  # weekly | unfollow | stop
    net_pnl: Mapped[Decimal] = mapped_column(DecimalType)  # cumulative, at settlement
    hwm_before: Mapped[Decimal] = mapped_column(DecimalType)
    hwm_after: Mapped[Decimal] = mapped_column(DecimalType)
    pct: Mapped[Decimal] = mapped_column(DecimalType)
    fee: Mapped[Decimal] = mapped_column(DecimalType)
    # The leader's portfolio the fee went to (None: before fees were paper, to the wallet).
    payout_portfolio_id: Mapped[int | None] = mapped_column(BigInteger, default=None)
    created_at: Mapped[int] = created_at_column()
