"""A test that opens a database without saying so fails (tests/databases.py): it cannot drop out
of the PostgreSQL half by accident. Run in a pytest of its own, as a new test would be."""

from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[2]
TESTS = """
import asyncio

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.ext.asyncio import create_async_engine


def _select_one(path):
    engine = create_engine(f"sqlite:///{path}")
    with engine.connect() as connection:
        return connection.execute(text("SELECT 1")).scalar()


def test_undeclared(tmp_path):
    assert _select_one(tmp_path / "a.db") == 1


@pytest.mark.database
def test_marked(tmp_path):
    assert _select_one(tmp_path / "b.db") == 1


def test_no_database():
    assert True


async def test_undeclared_async(tmp_path):
    engine = create_async_engine(f"sqlite+aiosqlite:///{tmp_path / 'c.db'}")
    async with engine.connect() as connection:
        assert (await connection.execute(text("SELECT 1"))).scalar() == 1
    await engine.dispose()


LEFT_RUNNING = []


@pytest.mark.database
async def test_leaves_a_task_that_connects_later(tmp_path):
    engine = create_async_engine(f"sqlite+aiosqlite:///{tmp_path / 'd.db'}")

    async def later():
        await asyncio.sleep(0.3)
        async with engine.connect() as connection:
            await connection.execute(text("SELECT 1"))
        await engine.dispose()

    LEFT_RUNNING.append(asyncio.get_running_loop().create_task(later()))


async def test_runs_while_an_earlier_tests_task_connects():
    await asyncio.wait_for(asyncio.shield(LEFT_RUNNING[0]), 30)  # it connects while this runs
    assert LEFT_RUNNING[0].exception() is None
"""


def test_a_test_that_opens_a_database_without_saying_so_fails(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    for name in ("PAPERTRADE_TEST_POSTGRES_URL", "PAPERTRADE_TEST_SPLIT"):
        monkeypatch.delenv(name, raising=False)
    pytester.makeconftest('pytest_plugins = ["tests.databases"]')
    pytester.makepyfile(test_inner=TESTS)
    result = pytester.runpytest_subprocess(
        "-p",
        "no:randomly",
        "-p",
        "no:cacheprovider",
        "-o",
        "asyncio_mode=auto",
        "-o",
        "asyncio_default_test_loop_scope=session",
    )
    # Each undeclared test passes its own assertions, then errors at teardown; the test running
    # while an earlier test's task connects is not blamed for that connection.
    result.assert_outcomes(passed=6, errors=2)
    result.stdout.fnmatch_lines_random(
        [
            "*test_undeclared opens a database (a connection through SQLAlchemy) without saying*",
            "*test_undeclared_async opens a database (a connection through SQLAlchemy)*",
        ]
    )
    result.stdout.no_fnmatch_line("*test_runs_while_an_earlier_tests_task_connects opens*")
