"""Indicators over whole price arrays, vectorised with numpy: the one implementation that
backtests and live evaluation share (live evaluation runs them over the recent bars).

Every function takes float64 arrays oldest first and returns an array of the same length,
NaN where the indicator is not defined yet (its warm-up). Definitions follow TradingView's
`ta.*` (EMA and Wilder's averages seeded with the simple average of their first window,
Bollinger bands on the population standard deviation), so numbers match what users see there.
"""

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view
from numpy.typing import NDArray

Array = NDArray[np.float64]

_BLOCK = 256  # recursive averages are computed 256 bars at a time, as one matrix product


def _nans(length: int) -> Array:
    return np.full(length, np.nan)


def _windows(values: Array, period: int) -> NDArray[np.float64] | None:
    if period > len(values):
        return None
    return sliding_window_view(values, period)


def sma(values: Array, period: int) -> Array:
    out = _nans(len(values))
    windows = _windows(values, period)
    if windows is not None:
        out[period - 1 :] = windows.mean(axis=1)
    return out


def highest(values: Array, period: int) -> Array:
    out = _nans(len(values))
    windows = _windows(values, period)
    if windows is not None:
        out[period - 1 :] = windows.max(axis=1)
    return out


def lowest(values: Array, period: int) -> Array:
    out = _nans(len(values))
    windows = _windows(values, period)
    if windows is not None:
        out[period - 1 :] = windows.min(axis=1)
    return out


def stdev(values: Array, period: int) -> Array:
    """Population standard deviation over the window (as TradingView's ta.stdev)."""
    out = _nans(len(values))
    windows = _windows(values, period)
    if windows is not None:
        out[period - 1 :] = windows.std(axis=1)
    return out


def change_pct(values: Array, period: int) -> Array:
    out = _nans(len(values))
    if period < len(values):
        out[period:] = (values[period:] / values[:-period] - 1.0) * 100.0
    return out


def _smooth(values: Array, period: int, alpha: float) -> Array:
    """y[t] = alpha·x[t] + (1 − alpha)·y[t−1], seeded with the mean of the first `period`
    defined values. The recursion is solved block by block: within a block every output is a
    weighted sum of the block's inputs plus a decayed carry, i.e. one matrix product."""
    out = _nans(len(values))
    defined = np.flatnonzero(~np.isnan(values))
    if len(defined) < period:
        return out
    seed_at = defined[0] + period - 1
    out[seed_at] = values[defined[0] : seed_at + 1].mean()
    rest = values[seed_at + 1 :]
    if len(rest) == 0:
        return out
    decay = 1.0 - alpha
    steps = np.arange(_BLOCK)
    lags = steps[:, None] - steps[None, :]
    with np.errstate(under="ignore"):
        weights = np.where(lags >= 0, alpha * decay ** np.maximum(lags, 0), 0.0)
        carry_weights = decay ** (steps + 1)
    padded = np.zeros(-(-len(rest) // _BLOCK) * _BLOCK)
    padded[: len(rest)] = rest
    blocks = padded.reshape(-1, _BLOCK) @ weights.T  # each block as if it started from 0
    carry = out[seed_at]
    for block in blocks:
        block += carry * carry_weights
        carry = block[-1]
    out[seed_at + 1 :] = blocks.reshape(-1)[: len(rest)]
    return out


def ema(values: Array, period: int) -> Array:
    return _smooth(values, period, 2.0 / (period + 1))


def rma(values: Array, period: int) -> Array:
    """Wilder's moving average (TradingView's ta.rma), used by RSI and ATR."""
    return _smooth(values, period, 1.0 / period)


def rsi(values: Array, period: int) -> Array:
    change = np.diff(values, prepend=np.nan)
    gains = rma(np.where(change > 0, change, 0.0) + change * 0.0, period)  # keep the NaN at 0
    losses = rma(np.where(change < 0, -change, 0.0) + change * 0.0, period)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = 100.0 - 100.0 / (1.0 + gains / losses)
    out[(losses == 0) & ~np.isnan(gains)] = 100.0
    return out


def atr(high: Array, low: Array, close: Array, period: int) -> Array:
    previous = np.concatenate(([np.nan], close[:-1]))
    true_range = np.fmax(high - low, np.fmax(np.abs(high - previous), np.abs(low - previous)))
    return rma(true_range, period)


def macd(values: Array, fast: int, slow: int, signal: int) -> tuple[Array, Array, Array]:
    """The MACD line, its signal line and the histogram."""
    line = ema(values, fast) - ema(values, slow)
    signal_line = ema(line, signal)
    return line, signal_line, line - signal_line


def bollinger(values: Array, period: int, k: float) -> tuple[Array, Array, Array]:
    """Upper, middle and lower band."""
    mid = sma(values, period)
    width = k * stdev(values, period)
    return mid + width, mid, mid - width
