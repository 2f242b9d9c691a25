"""The parsed form of a DSL strategy: plain frozen dataclasses, picklable for the job pool."""

from dataclasses import dataclass, field
from typing import Literal

Series = Literal["open", "high", "low", "close", "volume"]
EntrySide = Literal["long", "short"]
CloseWhich = Literal["long", "short", "all"]
SizeUnit = Literal["%", "usdt", "qty"]


@dataclass(frozen=True, slots=True)
class Number:
    value: float


@dataclass(frozen=True, slots=True)
class Column:
    name: Series


@dataclass(frozen=True, slots=True)
class Indicator:
    """`function(source, *numbers)`; functions without a source (atr) have `source` None."""

    function: str
    source: "Expr | None"
    numbers: tuple[float, ...]


@dataclass(frozen=True, slots=True)
class Arithmetic:
    op: Literal["+", "-", "*", "/"]
    left: "Expr"
    right: "Expr"


@dataclass(frozen=True, slots=True)
class Negate:
    operand: "Expr"


Expr = Number | Column | Indicator | Arithmetic | Negate


@dataclass(frozen=True, slots=True)
class Compare:
    op: Literal["<", "<=", ">", ">=", "==", "!="]
    left: Expr
    right: Expr


@dataclass(frozen=True, slots=True)
class Cross:
    direction: Literal["above", "below"]
    left: Expr
    right: Expr


@dataclass(frozen=True, slots=True)
class Logic:
    op: Literal["and", "or"]
    left: "Cond"
    right: "Cond"


@dataclass(frozen=True, slots=True)
class Not:
    operand: "Cond"


Cond = Compare | Cross | Logic | Not


@dataclass(frozen=True, slots=True)
class Size:
    amount: float
    unit: SizeUnit


@dataclass(frozen=True, slots=True)
class Entry:
    side: EntrySide
    size: Size | None


@dataclass(frozen=True, slots=True)
class Exit:
    which: CloseWhich


Action = Entry | Exit


@dataclass(frozen=True, slots=True)
class Rule:
    line: int
    text: str  # the rule as written, shown in signal history
    condition: Cond
    actions: tuple[Action, ...]


@dataclass(frozen=True, slots=True)
class Program:
    rules: tuple[Rule, ...]
    symbol: str | None = None
    timeframe: str | None = None
    leverage: int = 1
    size: Size = field(default_factory=lambda: Size(10.0, "%"))
    stop_loss_pct: float | None = None
    take_profit_pct: float | None = None
    trailing_stop_pct: float | None = None
