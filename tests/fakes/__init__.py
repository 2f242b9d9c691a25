"""Fakes of external systems, for tests: import the classes, or use the fixtures below.

A conftest that wants the fixture imports it: `from tests.fakes import binance_upstream`.
"""

from collections.abc import AsyncIterator

import pytest

from tests.fakes.binance_upstream import FakeBinanceUpstream

__all__ = ["FakeBinanceUpstream", "binance_upstream"]


@pytest.fixture
async def binance_upstream() -> AsyncIterator[FakeBinanceUpstream]:
    """A started fake Binance upstream (REST + WebSocket on loopback), stopped afterwards."""
    fake = FakeBinanceUpstream()
    await fake.start()
    try:
        yield fake
    finally:
        await fake.stop()
