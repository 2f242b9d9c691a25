"""Kill -9 between a commit and the delivery of its events: the outbox loses nothing and no
consumer's effect happens twice (issue 15, quick run; bench/bench_crash.py --outbox is longer)."""

from pathlib import Path

import pytest

from tests.conftest import PG_URL
from tests.liveserver import free_port
from tests.reliability.outbox_crash import run_outbox


@pytest.mark.skipif(PG_URL is not None, reason="the embedded mode under test is SQLite")
async def test_kill_minus_nine_between_commit_and_delivery(tmp_path: Path) -> None:
    report = await run_outbox(
        tmp_path, free_port(), kills=3, seconds_between=2.0, events_between=15
    )
    assert report.kills == 3
    assert report.events > 50  # the load really ran across the restarts
    assert report.undelivered == []
    assert report.duplicated == []
    assert report.orders_without_event == []  # each order's events committed with it
