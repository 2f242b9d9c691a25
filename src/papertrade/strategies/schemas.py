"""Bodies of /v1/strategies."""

from decimal import Decimal
from typing import Annotated, Any, Literal

from pydantic import Field, StringConstraints

from papertrade.kit.ids import Id
from papertrade.kit.schemas import Money, Schema, StrictInput

Kind = Literal["dsl", "python"]
Visibility = Literal["private", "public"]
Timeframe = Literal["1m", "5m", "15m", "30m", "1h", "4h", "1d"]
MAX_SOURCE = 100_000
# Kept exactly as written: stripping would move the line numbers errors and signals refer to.
Source = Annotated[str, StringConstraints(strip_whitespace=False)]

EXAMPLE_DSL = "symbol BTCUSDT\ntimeframe 1h\nwhen sma(10) crosses above sma(30) then buy 50%\n"


class StrategyCreate(StrictInput):
    kind: Kind = Field(examples=["dsl"])
    name: str = Field(min_length=1, max_length=100, examples=["SMA crossover"])
    description: str = Field(default="", max_length=2000)
    source: Source = Field(min_length=1, max_length=MAX_SOURCE, examples=[EXAMPLE_DSL])
    visibility: Visibility = "private"


class StrategyUpdate(StrictInput):
    name: str | None = Field(default=None, min_length=1, max_length=100)
    description: str | None = Field(default=None, max_length=2000)
    visibility: Visibility | None = None


class VersionCreate(StrictInput):
    source: Source = Field(min_length=1, max_length=MAX_SOURCE, examples=[EXAMPLE_DSL])


class VersionRead(Schema):
    number: int
    source: str
    summary: dict[str, Any]
    created_at: int


class StrategyRead(Schema):
    id: int
    code: str
    user_id: int
    kind: str
    name: str
    description: str
    visibility: str
    latest_version: int
    created_at: int
    updated_at: int


class StrategyWithSource(StrategyRead):
    source: str = Field(description="The latest version's source.")


class BacktestCreate(StrictInput):
    version: Id | None = Field(default=None, description="Default: the latest version.")
    symbol: str | None = Field(default=None, max_length=30, description="Default: the source's.")
    timeframe: Timeframe | None = Field(default=None, description="Default: the source's.")
    start: int = Field(ge=0, le=10**14, description="ms since the epoch (first bar's open)")
    end: int = Field(ge=0, le=10**14, description="ms since the epoch (exclusive)")
    initial_balance: Decimal = Field(
        default=Decimal(10_000), gt=0, le=Decimal(10**12), decimal_places=6
    )
    taker_fee_rate: Decimal | None = Field(default=None, ge=0, le=Decimal("0.01"), decimal_places=8)
    maker_fee_rate: Decimal | None = Field(default=None, ge=0, le=Decimal("0.01"), decimal_places=8)


class BacktestRead(Schema):
    id: int
    strategy_id: int
    version: int
    job_id: str | None
    deployment_id: int | None = Field(default=None, description="Set on a drift report.")
    symbol: str
    timeframe: str
    start_ms: int
    end_ms: int
    initial_balance: Money
    maker_fee_rate: Money
    taker_fee_rate: Money
    status: str
    error: str | None
    metrics: dict[str, Any] | None
    created_at: int
    finished_at: int | None
    progress: float = 0.0
    progress_text: str = ""


class BacktestDetail(BacktestRead):
    result: dict[str, Any] | None


class DeploymentCreate(StrictInput):
    portfolio_id: Id
    version: Id | None = Field(default=None, description="Default: the latest version.")
    symbol: str | None = Field(default=None, max_length=30)
    timeframe: Timeframe | None = None


class DeploymentRead(Schema):
    id: int
    strategy_id: int
    version: int
    portfolio_id: int
    symbol: str
    timeframe: str
    status: str
    last_bar_ms: int | None
    last_error: str | None
    created_at: int
    updated_at: int


class SignalRead(Schema):
    id: int
    deployment_id: int
    version: int
    time: int
    bar_time: int
    rule: str
    intent: dict[str, Any]
    outcome: str
    reason: str
    order_id: int | None


class SignalPage(Schema):
    signals: list[SignalRead]
    next_before_id: int | None


class PortfolioStrategy(Schema):
    """A strategy deployed into the portfolio (running or paused), named for the page."""

    deployment_id: int
    strategy_id: int
    strategy_code: str
    strategy_name: str
    kind: str
    version: int
    symbol: str
    timeframe: str
    status: str
    last_error: str | None


class PortfolioStrategySignal(SignalRead):
    """A strategy's signal as the portfolio lists it: which strategy produced it."""

    strategy_id: int
    strategy_code: str
    strategy_name: str


class PortfolioStrategySignalPage(Schema):
    signals: list[PortfolioStrategySignal]
    next_before_id: int | None
