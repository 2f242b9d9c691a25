"""A DSL program over bars: for every rule, the bars (closed) on which its condition holds.

Evaluated over whole arrays at once. A condition is only true where every value it reads is
defined (an indicator's warm-up counts as "not yet"), so `not (close > sma(200))` does not fire
before the 200th bar. Bar t's value uses bars 0..t only: nothing looks ahead.
"""

import operator
from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

from papertrade.strategies import indicators
from papertrade.strategies.bars import Bars
from papertrade.strategies.dsl import ast

Array = NDArray[np.float64]
Mask = NDArray[np.bool_]

COMPARE: dict[str, Callable[[Array, Array], Mask]] = {
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
    "==": operator.eq,
    "!=": operator.ne,
}
ARITHMETIC: dict[str, Callable[[Array, Array], Array]] = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "/": operator.truediv,
}


class Evaluator:
    """Evaluates expressions over one set of bars, computing each distinct indicator once."""

    def __init__(self, bars: Bars):
        self.bars = bars
        self._cache: dict[ast.Expr, Array] = {}

    def rule_masks(self, program: ast.Program) -> list[Mask]:
        """One mask per rule: True on the bars where the rule fires."""
        masks = []
        for rule in program.rules:
            value, defined = self.condition(rule.condition)
            masks.append(value & defined)
        return masks

    def condition(self, cond: ast.Cond) -> tuple[Mask, Mask]:
        """The condition's truth and where it is defined."""
        if isinstance(cond, ast.Compare):
            left, right = self.series(cond.left), self.series(cond.right)
            with np.errstate(invalid="ignore"):
                value = COMPARE[cond.op](left, right)
            return value, ~(np.isnan(left) | np.isnan(right))
        if isinstance(cond, ast.Cross):
            return self._cross(cond)
        if isinstance(cond, ast.Not):
            value, defined = self.condition(cond.operand)
            return ~value, defined
        left_value, left_defined = self.condition(cond.left)
        right_value, right_defined = self.condition(cond.right)
        combine = np.logical_and if cond.op == "and" else np.logical_or
        return combine(left_value, right_value), left_defined & right_defined

    def _cross(self, cond: ast.Cross) -> tuple[Mask, Mask]:
        difference = self.series(cond.left) - self.series(cond.right)
        before = np.concatenate(([np.nan], difference[:-1]))
        with np.errstate(invalid="ignore"):
            if cond.direction == "above":
                value = (difference > 0) & (before <= 0)
            else:
                value = (difference < 0) & (before >= 0)
        return value, ~(np.isnan(difference) | np.isnan(before))

    def series(self, expr: ast.Expr) -> Array:
        cached = self._cache.get(expr)
        if cached is None:
            cached = self._cache[expr] = self._compute(expr)
        return cached

    def _compute(self, expr: ast.Expr) -> Array:
        if isinstance(expr, ast.Number):
            return np.full(len(self.bars), expr.value)
        if isinstance(expr, ast.Column):
            return self.bars.column(expr.name)
        if isinstance(expr, ast.Negate):
            return -self.series(expr.operand)
        if isinstance(expr, ast.Arithmetic):
            with np.errstate(divide="ignore", invalid="ignore"):
                result = ARITHMETIC[expr.op](self.series(expr.left), self.series(expr.right))
            result[~np.isfinite(result)] = np.nan  # a division by zero is "undefined"
            return result
        return self._indicator(expr)

    def _indicator(self, expr: ast.Indicator) -> Array:
        n = [int(v) for v in expr.numbers]
        bars = self.bars
        if expr.function == "atr":
            return indicators.atr(bars.high, bars.low, bars.close, n[0])
        assert expr.source is not None  # every other function reads a source series
        source = self.series(expr.source)
        name = expr.function
        if name.startswith("macd"):
            line, signal, hist = indicators.macd(source, n[0], n[1], n[2])
            return {"macd": line, "macd_signal": signal, "macd_hist": hist}[name]
        if name.startswith("bb_"):
            upper, mid, lower = indicators.bollinger(source, n[0], expr.numbers[1])
            return {"bb_upper": upper, "bb_mid": mid, "bb_lower": lower}[name]
        simple: dict[str, Callable[[Array, int], Array]] = {
            "sma": indicators.sma,
            "ema": indicators.ema,
            "rsi": indicators.rsi,
            "highest": indicators.highest,
            "lowest": indicators.lowest,
            "change_pct": indicators.change_pct,
        }
        return simple[name](source, n[0])


def warm_up_bars(program: ast.Program) -> int:
    """How many bars before the newest one live evaluation needs for every indicator to be
    defined (the longest period, tripled for recursive averages to settle), at least 2 for a
    cross."""
    longest = 1
    for rule in program.rules:
        longest = max(longest, _longest(rule.condition))
    return max(2, longest * 3 + 2)


def _longest(node: object) -> int:
    if isinstance(node, ast.Indicator):
        own = (
            int(sum(node.numbers[:2])) if node.function.startswith("macd") else int(node.numbers[0])
        )
        return max(own, _longest(node.source))
    if isinstance(node, ast.Compare | ast.Cross | ast.Arithmetic | ast.Logic):
        return max(_longest(node.left), _longest(node.right))
    if isinstance(node, ast.Not | ast.Negate):
        return _longest(node.operand)
    return 0
