"""Candles as columns of float64 arrays (what indicators and the evaluator work on)."""

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from papertrade.trading.values import Kline


@dataclass(frozen=True)
class Bars:
    """Closed bars, oldest first; `time` is each bar's open time in ms."""

    time: NDArray[np.int64]
    open: NDArray[np.float64]
    high: NDArray[np.float64]
    low: NDArray[np.float64]
    close: NDArray[np.float64]
    volume: NDArray[np.float64]

    def __len__(self) -> int:
        return len(self.time)

    def column(self, name: str) -> NDArray[np.float64]:
        values: NDArray[np.float64] = getattr(self, name)
        return values

    @classmethod
    def from_klines(cls, klines: Sequence[Kline]) -> "Bars":
        def floats(field: str) -> NDArray[np.float64]:
            return np.array([float(getattr(k, field)) for k in klines], dtype=np.float64)

        return cls(
            time=np.array([k.open_time for k in klines], dtype=np.int64),
            open=floats("open"),
            high=floats("high"),
            low=floats("low"),
            close=floats("close"),
            volume=floats("volume"),
        )
