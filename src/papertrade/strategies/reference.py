"""The strategy reference the editor shows and /help/strategies serves, built from the code that
parses and runs strategies, so it cannot drift from what the server accepts.

The names come from where they are defined: the DSL's settings and keywords from its grammar
(dsl/grammar.lark, through the parser lark builds from it), its indicators, aliases, series and
limits from dsl/functions.py and dsl/parse.py; a Python strategy's class settings and imports from
pycheck.py, its indicators from the sandbox's runner, and `ctx` — its methods with their
arguments and defaults, `ctx.bar` and `ctx.position` — read (with `ast`, never imported: the
module loads the seccomp bindings) from the sandbox's child.py, the code that runs the strategy.
Only the one-line explanations are written here; tests/strategies/test_reference.py fails when a
name gains no explanation or an explanation outlives its name.
"""

import ast as pyast
import importlib.util
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, get_args

from papertrade.strategies import pycheck
from papertrade.strategies.backtests import MAX_PYTHON_BARS
from papertrade.strategies.candles import MAX_BARS
from papertrade.strategies.dsl import ast as dsl_ast
from papertrade.strategies.dsl import functions as dsl
from papertrade.strategies.dsl.parse import MAX_DEPTH, _parser
from papertrade.strategies.live import PYTHON_BARS, PYTHON_CPU_S
from papertrade.strategies.sandbox import protocol
from papertrade.strategies.sandbox import runner as sandbox_runner

# -- the explanations (keyed by the names the code defines) -----------------------------------

DSL_SETTINGS: dict[str, tuple[str, str]] = {  # keyword: (example, what)
    "symbol": (
        "symbol BTCUSDT",
        "the market it trades (can be chosen again at backtest or deploy)",
    ),
    "timeframe": ("timeframe 1h", "the bar it is evaluated on, at each close; default 1h"),
    "leverage": ("leverage 3", "whole number from 1 to 125; default 1"),
    "size": ("size 10%", "the entry size when an action names none; default 10%"),
    "stop_loss": ("stop_loss 2%", "a stop this far from each entry, closing the position"),
    "take_profit": ("take_profit 4%", "a target this far from each entry, closing the position"),
    "trailing_stop": (
        "trailing_stop 1.5%",
        "a stop trailing the best price by this much (live: 0.1% to 10%, as on Binance)",
    ),
}
DSL_FUNCTIONS: dict[str, str] = {
    "sma": "simple moving average",
    "ema": "exponential moving average (seeded with the SMA)",
    "rsi": "Wilder's relative strength index, 0 to 100",
    "atr": "Wilder's average true range (reads high, low and close)",
    "macd": "MACD line: EMA(fast) − EMA(slow)",
    "macd_signal": "EMA(signal) of the MACD line",
    "macd_hist": "MACD line − signal line",
    "bb_upper": "Bollinger upper band: SMA + k·σ (population σ)",
    "bb_mid": "Bollinger middle band: the SMA",
    "bb_lower": "Bollinger lower band: SMA − k·σ",
    "highest": "highest value over the last period bars, this one included",
    "lowest": "lowest value over the last period bars, this one included",
    "change_pct": "% change over period bars",
}
DSL_SIZE_UNITS: dict[str, tuple[str, str]] = {
    "%": ("buy 10%", "margin as a share of equity, times leverage"),
    "usdt": ("buy 250 usdt", "notional in USDT"),
    "qty": ("buy 0.01 qty", "base units (e.g. BTC)"),
}
DSL_CLOSE: dict[str, tuple[str, str]] = {
    "long": ("close long", "close a long position"),
    "short": ("close short", "close a short position"),
    "all": ("close all", "close whatever is open (so does close alone)"),
}
PYTHON_SETTINGS: dict[str, tuple[str, str]] = {
    "symbol": ('symbol = "BTCUSDT"', "the market it trades"),
    "timeframe": ('timeframe = "1h"', "the bar next() runs on"),
    "leverage": ("leverage = 2", "whole number from 1 to 125; default 1"),
    "stop_loss_pct": (
        "stop_loss_pct = 2.0",
        "a stop this % from each entry without its own sl",
    ),
    "take_profit_pct": (
        "take_profit_pct = 4.0",
        "a target this % from each entry without its own tp",
    ),
    "params": ('params = {"fast": 10}', "your parameters, read as ctx.params / self.params"),
}
PYTHON_INDICATORS: dict[str, tuple[str, str]] = {  # name: (example, what)
    "sma": ('ctx.indicator("sma", 20)', "simple moving average"),
    "ema": ('ctx.indicator("ema", 20)', "exponential moving average"),
    "rsi": ('ctx.indicator("rsi", 14)', "Wilder's RSI"),
    "atr": ('ctx.indicator("atr", 14)', "Wilder's average true range (no source)"),
    "highest": ('ctx.indicator("highest", 20, source="high")', "highest over the last bars"),
    "lowest": ('ctx.indicator("lowest", 20, source="low")', "lowest over the last bars"),
    "change_pct": ('ctx.indicator("change_pct", 4)', "% change over the bars"),
}
PYTHON_METHODS: dict[str, str] = {
    "indicator": (
        "an indicator over the whole run, as a series: [-1] is the current bar, [-2] the one "
        "before (a positive index is refused: no look-ahead); NaN until it has enough bars"
    ),
    "crossover": "True on the bar where series a crosses above series b",
    "buy": (
        "go long: size a fraction of equity in (0, 1] (times leverage); sl and tp are the "
        "stop and target prices, limit a limit entry good for the next bar only"
    ),
    "sell": "go short, with the same arguments as buy",
    "close": "close the whole position at the next bar's open",
}
PYTHON_FIELDS: dict[str, str] = {
    "bar": "the bar that just closed",
    "position": (
        "the position the strategy's orders made (filled at the next open; a refused order "
        "is in the signal history, not here)"
    ),
    "params": "the class's params",
}
PYTHON_BAR: dict[str, str] = {
    "open": "open price",
    "high": "high",
    "low": "low",
    "close": "close",
    "volume": "volume",
    "ts": "open time, ms since the epoch",
}
PYTHON_POSITION: dict[str, str] = {
    "side": '"long", "short" or "flat"',
    "qty": "0 when flat",
    "entry": "the entry price",
    "pnl_pct": "unrealized % at the close",
}


# -- what the reference is ---------------------------------------------------------------------


@dataclass(frozen=True)
class Item:
    name: str
    syntax: str
    what: str


@dataclass(frozen=True)
class Reference:
    dsl_settings: list[Item]
    dsl_functions: list[Item]
    dsl_series: list[str]
    dsl_aliases: list[Item]
    dsl_comparators: list[str]
    dsl_entries: list[str]
    dsl_sizes: list[Item]
    dsl_closes: list[Item]
    dsl_timeframes: list[str]
    dsl_limits: list[Item]
    python_settings: list[Item]
    python_fields: list[Item]
    python_methods: list[Item]
    python_bar: list[Item]
    python_position: list[Item]
    python_indicators: list[Item]
    python_imports: list[str]
    python_limits: list[Item]


def _terminals() -> dict[str, Any]:
    return {t.name: t.pattern for t in _parser().terminals}


def _alternatives(pattern: Any) -> list[str]:
    """The words of a grammar terminal: a string, or an alternation of (?i:word) groups."""
    if type(pattern).__name__ == "PatternStr":
        return [str(pattern.value)]
    body = str(pattern.value)
    if body.startswith("(?:") and body.endswith(")"):
        body = body[3:-1]
    words = []
    for part in body.split("|"):
        if part.startswith("(?i:") and part.endswith(")"):
            part = part[4:-1]
        words.append(part.replace("\\", ""))
    return words


def dsl_setting_keywords() -> list[str]:
    """The settings the grammar accepts, in its order."""
    found = _terminals()
    return [str(p.value) for name, p in found.items() if name.startswith("SETTING_")]


def _signature(name: str, spec: dsl.FunctionSpec) -> str:
    parts = []
    for number, default in spec.numbers:
        parts.append(number if default is None else f"{number}={default:g}")
    inner = ", ".join(parts)
    if spec.takes_source:
        inner = f"[series,] {inner}" if inner else "[series]"
    return f"{name}({inner})"


@dataclass(frozen=True)
class _Method:
    name: str
    signature: str


def _child_tree() -> pyast.Module:
    spec = importlib.util.find_spec("papertrade.strategies.sandbox.child")
    assert spec is not None
    assert spec.origin is not None
    return pyast.parse(Path(spec.origin).read_text())


def _child_class(tree: pyast.Module, name: str) -> pyast.ClassDef:
    for node in tree.body:
        if isinstance(node, pyast.ClassDef) and node.name == name:
            return node
    raise LookupError(name)


def _child_constant(tree: pyast.Module, name: str) -> Any:
    for node in tree.body:
        if isinstance(node, pyast.Assign) and any(
            isinstance(t, pyast.Name) and t.id == name for t in node.targets
        ):
            return pyast.literal_eval(node.value)
    raise LookupError(name)


def python_ctx_methods() -> list[_Method]:
    """The public methods of the sandbox's `ctx` (child.Context) with their arguments as the
    strategy calls them (no `self`, no annotations)."""
    context = _child_class(_child_tree(), "Context")
    methods = []
    for node in context.body:
        if not isinstance(node, pyast.FunctionDef) or node.name.startswith("_"):
            continue
        args = node.args
        positional = args.args[1:]
        defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
        parts = [
            a.arg if d is None else f"{a.arg}={pyast.unparse(d)}"
            for a, d in zip(positional, defaults, strict=True)
        ]
        if args.vararg is not None:
            parts.append(f"*{args.vararg.arg}")
        for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True):
            parts.append(a.arg if d is None else f"{a.arg}={pyast.unparse(d)}")
        methods.append(_Method(node.name, f"ctx.{node.name}({', '.join(parts)})"))
    return methods


def python_ctx_fields() -> list[str]:
    """The attributes child.Context sets for the strategy (`self.x = …` in __init__, public)."""
    context = _child_class(_child_tree(), "Context")
    init = next(
        n for n in context.body if isinstance(n, pyast.FunctionDef) and n.name == "__init__"
    )
    names: list[str] = []
    for node in pyast.walk(init):
        targets = node.targets if isinstance(node, pyast.Assign) else []
        for target in targets:
            for element in target.elts if isinstance(target, pyast.Tuple) else [target]:
                if (
                    isinstance(element, pyast.Attribute)
                    and isinstance(element.value, pyast.Name)
                    and element.value.id == "self"
                    and not element.attr.startswith("_")
                    and element.attr not in names
                ):
                    names.append(element.attr)
    return [n for n in names if n != "orders"]  # the bar's orders: the protocol's, not an API


def python_bar_fields() -> list[str]:
    """`ctx.bar`'s fields: child.Bar's class attributes (`open = high = … = 0.0` is one
    assignment with several targets)."""
    bar = _child_class(_child_tree(), "Bar")
    return [
        target.id
        for node in bar.body
        if isinstance(node, pyast.Assign)
        for target in node.targets
        if isinstance(target, pyast.Name)
    ]


def python_position_fields() -> list[str]:
    position = _child_class(_child_tree(), "Position")
    for node in position.body:
        if isinstance(node, pyast.Assign) and any(
            isinstance(t, pyast.Name) and t.id == "__slots__" for t in node.targets
        ):
            slots = list(pyast.literal_eval(node.value))
            order = list(PYTHON_POSITION)
            return sorted(slots, key=lambda s: order.index(s) if s in order else len(order))
    raise LookupError("Position.__slots__")


def _items(names: list[str], explained: dict[str, str], syntax: dict[str, str]) -> list[Item]:
    return [Item(n, syntax.get(n, n), explained.get(n, "")) for n in names]


def _entry_order(word: str) -> int:
    order = ("buy", "long", "sell", "short")  # the grammar lists them longest first
    return order.index(word) if word in order else len(order)


@cache
def reference() -> Reference:
    terminals = _terminals()
    tree = _child_tree()
    max_orders = _child_constant(tree, "MAX_ORDERS_PER_BAR")
    keywords = dsl_setting_keywords()
    methods = python_ctx_methods()
    python_indicator_names = list(sandbox_runner.INDICATORS)
    return Reference(
        dsl_settings=[
            Item(k, DSL_SETTINGS.get(k, (k, ""))[0], DSL_SETTINGS.get(k, ("", ""))[1])
            for k in keywords
        ],
        dsl_functions=[
            Item(name, _signature(name, spec), DSL_FUNCTIONS.get(name, ""))
            for name, spec in dsl.FUNCTIONS.items()
        ],
        dsl_series=[
            name if name == real else f"{name} (= {real})" for name, real in dsl.SERIES.items()
        ],
        dsl_aliases=[
            *(Item(a, f"{a}(…)", f"= {n}") for a, n in dsl.ALIASES.items()),
            *(Item(a, f"{a}(a, b)", f"= a crosses {d} b") for a, d in dsl.CROSS_FUNCTIONS.items()),
        ],
        dsl_comparators=[
            *_alternatives(terminals["COMPARATOR"]),
            *(f"crosses {d}" for d in _alternatives(terminals["DIRECTION"])),
        ],
        dsl_entries=sorted(_alternatives(terminals["ENTRY"]), key=_entry_order),
        dsl_sizes=[
            Item(u, DSL_SIZE_UNITS.get(u, (u, ""))[0], DSL_SIZE_UNITS.get(u, ("", ""))[1])
            for u in get_args(dsl_ast.SizeUnit)
        ],
        dsl_closes=[
            Item(w, DSL_CLOSE.get(w, (w, ""))[0], DSL_CLOSE.get(w, ("", ""))[1])
            for w in get_args(dsl_ast.CloseWhich)
        ],
        dsl_timeframes=list(pycheck.TIMEFRAMES),
        dsl_limits=[
            Item("rules", str(dsl.MAX_RULES), "rules in a strategy"),
            Item("conditions", str(dsl.MAX_CONDITIONS), "conditions in one rule"),
            Item("period", f"1–{dsl.MAX_PERIOD}", "an indicator's period, a whole number"),
            Item("nesting", str(MAX_DEPTH), "levels of nesting in one rule"),
            Item("backtest", f"{MAX_BARS:,}", "bars in one backtest"),
        ],
        python_settings=[
            Item(s, PYTHON_SETTINGS.get(s, (s, ""))[0], PYTHON_SETTINGS.get(s, ("", ""))[1])
            for s in pycheck.SETTINGS
        ],
        python_fields=_items(
            python_ctx_fields(),
            PYTHON_FIELDS,
            {"bar": "ctx.bar", "position": "ctx.position", "params": "ctx.params"},
        ),
        python_methods=[Item(m.name, m.signature, PYTHON_METHODS.get(m.name, "")) for m in methods],
        python_bar=_items(python_bar_fields(), PYTHON_BAR, {}),
        python_position=_items(python_position_fields(), PYTHON_POSITION, {}),
        python_indicators=[
            Item(n, PYTHON_INDICATORS.get(n, (n, ""))[0], PYTHON_INDICATORS.get(n, ("", ""))[1])
            for n in python_indicator_names
        ],
        python_imports=sorted(pycheck.ALLOWED_IMPORTS),
        python_limits=[
            Item("orders", str(max_orders), "orders a bar"),
            Item("indicators", str(protocol.MAX_INDICATORS), "indicators a run"),
            Item("period", f"1–{sandbox_runner.MAX_PERIOD:,}", "an indicator's periods"),
            Item("backtest", f"{MAX_PYTHON_BARS:,}", "bars in one backtest"),
            Item("live", f"{PYTHON_BARS}", "recent bars each live evaluation runs over"),
            Item("live CPU", f"{PYTHON_CPU_S} s", "CPU time of one live evaluation"),
        ],
    )
