"""Strategies: a named DSL or Python source with immutable numbered versions, its backtests,
its live deployments into portfolios and the signals those emitted."""

from decimal import Decimal
from typing import Any

from sqlalchemy import JSON, BigInteger, ForeignKey, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from papertrade.db import Base
from papertrade.kit.dbtypes import DecimalType
from papertrade.kit.ids import is_id
from papertrade.kit.time import now_ms
from papertrade.models.base import created_at_column, updated_at_column

CODE_PREFIX = "S"
CODE_DIGITS = 7


class Strategy(Base):
    __tablename__ = "strategies"

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    kind: Mapped[str] = mapped_column(String(10))  # dsl | python
    name: Mapped[str] = mapped_column(String(100))
    description: Mapped[str] = mapped_column(String(2000), default="")
    visibility: Mapped[str] = mapped_column(String(10), default="private")
    latest_version: Mapped[int] = mapped_column(Integer, default=1)
    created_at: Mapped[int] = created_at_column()
    updated_at: Mapped[int] = updated_at_column()
    deleted_at: Mapped[int | None] = mapped_column(BigInteger, default=None)

    @property
    def code(self) -> str:
        return code_of(self.id)


def code_of(strategy_id: int) -> str:
    """The short code of a strategy (its public page is /s/<code>)."""
    return f"{CODE_PREFIX}{strategy_id:0{CODE_DIGITS}d}"


def id_from_code(code: str) -> int | None:
    """The strategy id a short code names, or None when it is not a code."""
    prefix, digits = code[:1], code[1:]
    if prefix.upper() != CODE_PREFIX or not (digits.isascii() and digits.isdigit()):
        return None
    number = int(digits) if len(digits) <= 19 else 0
    return number if is_id(number) else None


class StrategyVersion(Base):
    """A source as saved: never changed, numbered 1, 2, … per strategy."""

    __tablename__ = "strategy_versions"
    __table_args__ = (UniqueConstraint("strategy_id", "number"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    strategy_id: Mapped[int] = mapped_column(ForeignKey("strategies.id", ondelete="CASCADE"))
    number: Mapped[int] = mapped_column(Integer)
    source: Mapped[str] = mapped_column(Text)
    # what validation found: symbol, timeframe, leverage, rules (DSL) or class settings (Python)
    summary: Mapped[Any] = mapped_column(JSON, default=dict)
    created_at: Mapped[int] = created_at_column()


class StrategyBacktest(Base):
    """One self-backtest of a version: what was asked, its job, and the result when done."""

    __tablename__ = "strategy_backtests"
    __table_args__ = (Index("ix_strategy_backtests_strategy_id_id", "strategy_id", "id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    strategy_id: Mapped[int] = mapped_column(ForeignKey("strategies.id", ondelete="CASCADE"))
    version: Mapped[int] = mapped_column(Integer)
    job_id: Mapped[str | None] = mapped_column(String(64), default=None)
    # set on a drift report: the deployment whose live period this backtest replays
    deployment_id: Mapped[int | None] = mapped_column(Integer, default=None)
    symbol: Mapped[str] = mapped_column(String(30))
    timeframe: Mapped[str] = mapped_column(String(4))
    start_ms: Mapped[int] = mapped_column(BigInteger)
    end_ms: Mapped[int] = mapped_column(BigInteger)
    initial_balance: Mapped[Decimal] = mapped_column(DecimalType)
    maker_fee_rate: Mapped[Decimal] = mapped_column(DecimalType)
    taker_fee_rate: Mapped[Decimal] = mapped_column(DecimalType)
    status: Mapped[str] = mapped_column(String(10), default="queued")  # queued|running|done|failed
    error: Mapped[str | None] = mapped_column(Text, default=None)
    metrics: Mapped[Any] = mapped_column(JSON, default=None, nullable=True)
    result: Mapped[Any] = mapped_column(JSON, default=None, nullable=True)
    created_at: Mapped[int] = created_at_column()
    finished_at: Mapped[int | None] = mapped_column(BigInteger, default=None)


class StrategyDeployment(Base):
    """A version running live into one of the owner's portfolios."""

    __tablename__ = "strategy_deployments"

    id: Mapped[int] = mapped_column(primary_key=True)
    strategy_id: Mapped[int] = mapped_column(
        ForeignKey("strategies.id", ondelete="CASCADE"), index=True
    )
    version: Mapped[int] = mapped_column(Integer)
    portfolio_id: Mapped[int] = mapped_column(
        ForeignKey("portfolios.id", ondelete="CASCADE"), index=True
    )
    symbol: Mapped[str] = mapped_column(String(30))
    timeframe: Mapped[str] = mapped_column(String(4))
    status: Mapped[str] = mapped_column(
        String(10), default="running", index=True
    )  # running|paused|stopped
    last_bar_ms: Mapped[int | None] = mapped_column(
        BigInteger, default=None
    )  # newest bar evaluated
    last_error: Mapped[str | None] = mapped_column(Text, default=None)
    created_at: Mapped[int] = created_at_column()
    updated_at: Mapped[int] = updated_at_column()


class StrategySignal(Base):
    """A signal a deployed strategy emitted: bar, the rule that fired, the order, the outcome."""

    __tablename__ = "strategy_signals"
    __table_args__ = (Index("ix_strategy_signals_strategy_id_id", "strategy_id", "id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    strategy_id: Mapped[int] = mapped_column(ForeignKey("strategies.id", ondelete="CASCADE"))
    deployment_id: Mapped[int] = mapped_column(
        ForeignKey("strategy_deployments.id", ondelete="CASCADE")
    )
    version: Mapped[int] = mapped_column(Integer)
    time: Mapped[int] = mapped_column(BigInteger, default=now_ms)
    bar_time: Mapped[int] = mapped_column(BigInteger)
    rule: Mapped[str] = mapped_column(String(300))
    intent: Mapped[Any] = mapped_column(JSON, default=dict)  # side, quantity, reduce_only…
    outcome: Mapped[str] = mapped_column(String(10))  # executed | refused | skipped
    reason: Mapped[str] = mapped_column(String(500), default="")
    order_id: Mapped[int | None] = mapped_column(Integer, default=None)


class CandleCache(Base):
    """Closed candles fetched from the market feed for backtests, kept so a rerun is local."""

    __tablename__ = "candle_cache"

    source: Mapped[str] = mapped_column(String(10), primary_key=True)  # binance | sim | replay
    symbol: Mapped[str] = mapped_column(String(30), primary_key=True)
    timeframe: Mapped[str] = mapped_column(String(4), primary_key=True)
    open_time: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    open: Mapped[Decimal] = mapped_column(DecimalType)
    high: Mapped[Decimal] = mapped_column(DecimalType)
    low: Mapped[Decimal] = mapped_column(DecimalType)
    close: Mapped[Decimal] = mapped_column(DecimalType)
    volume: Mapped[Decimal] = mapped_column(DecimalType)
