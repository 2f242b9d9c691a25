"""A test that opens a database without saying so fails (tests/databases.py): it cannot drop out
of the PostgreSQL half by accident. Run in a pytest of its own, as a new test would be."""

from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[2]
TESTS = """
import pytest
from sqlalchemy import create_engine, text


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
"""


def test_a_test_that_opens_a_database_without_saying_so_fails(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    for name in ("PAPERTRADE_TEST_POSTGRES_URL", "PAPERTRADE_TEST_SPLIT"):
        monkeypatch.delenv(name, raising=False)
    pytester.makeconftest('pytest_plugins = ["tests.databases"]')
    pytester.makepyfile(test_inner=TESTS)
    result = pytester.runpytest_subprocess("-p", "no:randomly", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=3, errors=1)
    result.stdout.fnmatch_lines(
        [
            "*ERROR at teardown of test_undeclared*",
            "*test_undeclared opens a database (a connection through SQLAlchemy) without saying*",
        ]
    )
