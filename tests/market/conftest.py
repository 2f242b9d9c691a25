"""Market-data test fixtures: the fake Binance upstream and a fixed clock."""

from tests.fakes import binance_upstream

__all__ = ["binance_upstream"]
