"""The DSL's indicator functions: their arguments, defaults and Pine-style aliases."""

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class FunctionSpec:
    """`numbers` names the numeric arguments after the optional source series, with defaults
    (None: required). `periods` are the ones that must be whole numbers from 1 to 500."""

    takes_source: bool
    numbers: tuple[tuple[str, float | None], ...]
    periods: frozenset[str]


def _spec(takes_source: bool, *numbers: tuple[str, float | None]) -> FunctionSpec:
    periods = frozenset(name for name, _ in numbers if name != "k")
    return FunctionSpec(takes_source, numbers, periods)


MACD = (("fast", 12.0), ("slow", 26.0), ("signal", 9.0))
BOLLINGER = (("period", 20.0), ("k", 2.0))

FUNCTIONS: dict[str, FunctionSpec] = {
    "sma": _spec(True, ("period", None)),
    "ema": _spec(True, ("period", None)),
    "rsi": _spec(True, ("period", 14.0)),
    "atr": _spec(False, ("period", 14.0)),
    "macd": _spec(True, *MACD),
    "macd_signal": _spec(True, *MACD),
    "macd_hist": _spec(True, *MACD),
    "bb_upper": _spec(True, *BOLLINGER),
    "bb_mid": _spec(True, *BOLLINGER),
    "bb_lower": _spec(True, *BOLLINGER),
    "highest": _spec(True, ("period", None)),
    "lowest": _spec(True, ("period", None)),
    "change_pct": _spec(True, ("period", 1.0)),
}

# Pine Script names users paste from TradingView.
ALIASES = {f"ta.{name}": name for name in ("sma", "ema", "rsi", "atr", "highest", "lowest")}
CROSS_FUNCTIONS = {
    "crossover": "above",
    "crossunder": "below",
    "ta.crossover": "above",
    "ta.crossunder": "below",
}
SERIES = {"open": "open", "high": "high", "low": "low", "close": "close", "volume": "volume"}
SERIES["price"] = "close"

MAX_PERIOD = 500
MAX_RULES = 20
MAX_CONDITIONS = 10
