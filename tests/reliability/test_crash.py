"""Kill -9 the embedded service under load: nothing acknowledged is lost (issue 7.3, quick run)."""

from pathlib import Path

import pytest

from tests.conftest import PG_URL
from tests.liveserver import free_port
from tests.reliability.crashkit import run


@pytest.mark.skipif(PG_URL is not None, reason="the embedded mode under test is SQLite")
async def test_kill_minus_nine_loses_nothing(tmp_path: Path) -> None:
    report = await run(tmp_path, free_port(), kills=3, seconds_between=2.0, acked_between=12)
    assert report.kills == 3
    assert report.acknowledged > 30  # the load really ran across the restarts
    assert report.lost == []
    assert report.duplicate_fills == []
    assert report.overfilled == []
    assert report.resting_lost == []
    assert report.ledger_mismatches == []
