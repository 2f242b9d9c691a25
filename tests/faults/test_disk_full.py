"""The embedded SQLite database on a filesystem that fills up (a real 4 MB tmpfs, mounted by the
test when it runs as root): orders answer 507 storage_full, never 500; /healthz says the disk is
full; one warning line each way; orders go through again once space is freed.

Without the right to mount, the test is skipped: docs/reliability.md gives the same procedure
by hand."""

import contextlib
import logging
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import bearer, client_for, make_settings, running_app, sign_up
from tests.trading_api.helpers import set_price

# SQLite's own file, on whichever database the run uses (tests/databases.py)
pytestmark = pytest.mark.one_database


@contextlib.contextmanager
def small_filesystem(where: Path, size: str = "4m") -> Iterator[Path]:
    where.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)],
        capture_output=True,
        check=False,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a small filesystem here: {mounted.stderr.decode().strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def fill(folder: Path) -> Path:
    """Write a file until the filesystem is full (down to its last block)."""
    filler = folder / "filler"
    with filler.open("wb", buffering=0) as out:
        for chunk in (65536, 512):
            with contextlib.suppress(OSError):
                while True:
                    out.write(b"\0" * chunk)
    assert shutil.disk_usage(folder).free < 65536
    return filler


async def test_a_full_disk_answers_507_and_recovers(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with small_filesystem(tmp_path / "data") as data:
        settings = make_settings(f"sqlite+aiosqlite:///{data / 'papertrade.db'}", data)
        async with running_app(settings) as app, client_for(app) as client:
            user = await sign_up(app)
            pid = (await user.portfolio())["id"]
            key = await user.api_key()
            await set_price(app, "BTCUSDT", "60000")
            order = {
                "portfolio_id": pid,
                "symbol": "BTCUSDT",
                "side": "buy",
                "type": "market",
                "quantity": "0.01",
            }
            caplog.set_level(logging.WARNING)
            filler = fill(data)

            statuses = []
            for _ in range(300):  # SQLite's free pages take a few orders first
                answer = await client.post("/v1/order", json=order, headers=bearer(key))
                statuses.append(answer.status_code)
                if answer.status_code != 201:
                    break
            assert statuses[-1] == 507, answer.text
            assert set(statuses) <= {201, 507}
            assert answer.json()["error"] == "storage_full"
            assert "storage is full" in answer.json()["msg"]
            health = await client.get("/healthz")
            assert health.status_code == 503 and health.json()["disk"] == "full"

            filler.unlink()
            again = await client.post("/v1/order", json=order, headers=bearer(key))
            assert again.status_code == 201, again.text
            health = await client.get("/healthz")
            assert health.status_code == 200 and health.json()["disk"] == "ok"

    lines = [r.getMessage() for r in caplog.records if r.name == "papertrade.faults"]
    assert lines == [
        "database unavailable: storage is full",
        "database available again (it was: storage is full)",
    ]
