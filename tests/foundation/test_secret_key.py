"""The generated secret key: one per data directory, even when several workers start together."""

import multiprocessing
import stat
from multiprocessing.synchronize import Barrier
from pathlib import Path

import pytest

from papertrade.config import Settings

STARTERS = 8


def _start(var_dir: Path, barrier: Barrier, keys: "multiprocessing.Queue[str]") -> None:
    settings = Settings(var_dir=var_dir, secret_key="")
    barrier.wait()  # every worker asks for the key at the same moment, as at a fresh start
    keys.put(settings.resolved_secret_key())


def test_workers_starting_together_on_a_fresh_directory_share_one_key(tmp_path: Path) -> None:
    context = multiprocessing.get_context("fork")
    for attempt in range(15):
        var_dir = tmp_path / f"start{attempt}"
        barrier = context.Barrier(STARTERS)
        keys: multiprocessing.Queue[str] = context.Queue()
        starters = [
            context.Process(target=_start, args=(var_dir, barrier, keys)) for _ in range(STARTERS)
        ]
        for starter in starters:
            starter.start()
        got = {keys.get(timeout=30) for _ in starters}
        for starter in starters:
            starter.join()
        # Another key in any worker would leave its encrypted secrets unreadable to the others.
        assert got == {(var_dir / "secret_key").read_text()}, f"attempt {attempt}: {len(got)} keys"
        assert stat.S_IMODE((var_dir / "secret_key").stat().st_mode) == 0o600
        assert sorted(p.name for p in var_dir.iterdir()) == ["secret_key"]  # no leftovers


def test_the_key_survives_restarts_and_an_empty_file_is_refused(tmp_path: Path) -> None:
    first = Settings(var_dir=tmp_path, secret_key="").resolved_secret_key()
    assert Settings(var_dir=tmp_path, secret_key="").resolved_secret_key() == first
    (tmp_path / "secret_key").write_text("")
    with pytest.raises(SystemExit, match="is empty"):
        Settings(var_dir=tmp_path, secret_key="").resolved_secret_key()
