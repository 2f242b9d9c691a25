"""Each vectorised indicator against an independent plain-Python loop of its definition."""

import math
from collections.abc import Callable

import numpy as np
import pytest
from numpy.typing import NDArray

from papertrade.strategies import indicators

RNG = np.random.default_rng(7)
CLOSE = 100 + np.cumsum(RNG.normal(0, 1, 1200))
HIGH = CLOSE + RNG.uniform(0, 2, len(CLOSE))
LOW = CLOSE - RNG.uniform(0, 2, len(CLOSE))


def ref_sma(x: list[float], n: int) -> list[float]:
    return [math.nan if i < n - 1 else sum(x[i - n + 1 : i + 1]) / n for i in range(len(x))]


def ref_smooth(x: list[float], n: int, alpha: float) -> list[float]:
    """Seeded with the mean of the first n defined values, then alpha·x + (1 − alpha)·prev."""
    out = [math.nan] * len(x)
    first = next(i for i, v in enumerate(x) if not math.isnan(v))
    seed = first + n - 1
    if seed >= len(x):
        return out
    out[seed] = sum(x[first : seed + 1]) / n
    for i in range(seed + 1, len(x)):
        out[i] = alpha * x[i] + (1 - alpha) * out[i - 1]
    return out


def ref_rsi(x: list[float], n: int) -> list[float]:
    change = [math.nan] + [x[i] - x[i - 1] for i in range(1, len(x))]
    gains = ref_smooth([c if math.isnan(c) else max(c, 0) for c in change], n, 1 / n)
    losses = ref_smooth([c if math.isnan(c) else max(-c, 0) for c in change], n, 1 / n)
    return [
        math.nan if math.isnan(g) else (100.0 if lo == 0 else 100 - 100 / (1 + g / lo))
        for g, lo in zip(gains, losses, strict=True)
    ]


def ref_atr(h: list[float], lo: list[float], c: list[float], n: int) -> list[float]:
    tr = [h[0] - lo[0]] + [
        max(h[i] - lo[i], abs(h[i] - c[i - 1]), abs(lo[i] - c[i - 1])) for i in range(1, len(c))
    ]
    return ref_smooth(tr, n, 1 / n)


def ref_window(x: list[float], n: int, f: Callable[[list[float]], float]) -> list[float]:
    return [math.nan if i < n - 1 else f(x[i - n + 1 : i + 1]) for i in range(len(x))]


def same(actual: NDArray[np.float64], expected: list[float]) -> None:
    expected_array = np.array(expected)
    assert np.array_equal(np.isnan(actual), np.isnan(expected_array))
    assert np.allclose(
        actual[~np.isnan(actual)], expected_array[~np.isnan(expected_array)], rtol=1e-9, atol=1e-9
    )


X = CLOSE.tolist()


@pytest.mark.parametrize("n", [1, 2, 10, 30, 200])
def test_sma_ema_rma(n: int) -> None:
    same(indicators.sma(CLOSE, n), ref_sma(X, n))
    same(indicators.ema(CLOSE, n), ref_smooth(X, n, 2 / (n + 1)))
    same(indicators.rma(CLOSE, n), ref_smooth(X, n, 1 / n))


@pytest.mark.parametrize("n", [2, 14, 50])
def test_rsi_and_atr(n: int) -> None:
    same(indicators.rsi(CLOSE, n), ref_rsi(X, n))
    same(indicators.atr(HIGH, LOW, CLOSE, n), ref_atr(HIGH.tolist(), LOW.tolist(), X, n))


def test_rsi_is_100_when_prices_only_rise() -> None:
    rising = np.arange(1.0, 40.0)
    assert np.all(indicators.rsi(rising, 14)[14:] == 100.0)


def test_macd_lines() -> None:
    line, signal, hist = indicators.macd(CLOSE, 12, 26, 9)
    ref_line = [
        a - b for a, b in zip(ref_smooth(X, 12, 2 / 13), ref_smooth(X, 26, 2 / 27), strict=True)
    ]
    same(line, ref_line)
    same(signal, ref_smooth(ref_line, 9, 0.2))
    same(hist, [a - b for a, b in zip(ref_line, ref_smooth(ref_line, 9, 0.2), strict=True)])


def test_bollinger_highest_lowest_change() -> None:
    def pstdev(w: list[float]) -> float:
        m = sum(w) / len(w)
        return math.sqrt(sum((v - m) ** 2 for v in w) / len(w))

    upper, mid, lower = indicators.bollinger(CLOSE, 20, 2.0)
    mids, devs = ref_sma(X, 20), ref_window(X, 20, pstdev)
    same(mid, mids)
    same(upper, [m + 2 * d for m, d in zip(mids, devs, strict=True)])
    same(lower, [m - 2 * d for m, d in zip(mids, devs, strict=True)])
    same(indicators.highest(CLOSE, 15), ref_window(X, 15, max))
    same(indicators.lowest(CLOSE, 15), ref_window(X, 15, min))
    same(
        indicators.change_pct(CLOSE, 5),
        [math.nan] * 5 + [(X[i] / X[i - 5] - 1) * 100 for i in range(5, len(X))],
    )


def test_a_period_longer_than_the_data_is_all_undefined() -> None:
    assert np.isnan(indicators.sma(CLOSE[:5], 10)).all()
    assert np.isnan(indicators.ema(CLOSE[:5], 10)).all()
