"""Which tests run on PostgreSQL too: those whose outcome can depend on the database.

The suite runs twice, on SQLite and then on PostgreSQL (the Makefile's test-sqlite and
test-postgres). The PostgreSQL half runs only the tests that open a database and are not marked
`one_database`; everything else (the pure kernel, parsing, the DSL, the wire formats, and the
areas in ONE_DATABASE below, which use a database but check nothing that differs between the
two) runs once: in the SQLite half, or under `make test` for some areas in the PostgreSQL half
(ONCE_IN_POSTGRES_HALF below), so that the two halves, run side by side, end together.

A test opens a database when it requests `database_url`, `isolated_settings` or `uses_database`
(directly or through another fixture) or carries the `database` or `one_database` marker. A test
that builds an app's settings (`make_settings`) without one of these fails at once, and so does
one whose process opens any database connection through SQLAlchemy (a pool's `connect` event,
whoever made the engine): a test cannot drop out of the PostgreSQL half by accident, it has to
say what it uses. The check runs while the test runs, not at collection: only running a test
shows what it opens, and an undeclared one still runs (and fails) in the SQLite half.
"""

import asyncio
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextvars import ContextVar
from pathlib import Path

import asyncpg
import pytest

DATABASE_FIXTURES = frozenset({"database_url", "isolated_settings", "uses_database"})

# Areas that use a database to set the scene but whose assertions are about something the database
# cannot change: what a page or a client library shows and sends. Each says why.
ONE_DATABASE = {
    "tests/web/": "pages and browser journeys: what the browser shows, over the domain's API",
    "tests/fapi/test_ccxt.py": "ccxt's parsing of the Binance wire format",
    "tests/fapi/test_node_client.py": "a Node.js client's parsing of the Binance wire format",
    "tests/fapi/test_other_clients.py": "python-binance and the connector parsing the wire format",
    "tests/fapi/test_stream_clients.py": "WebSocket clients parsing Binance's stream events",
    "tests/fapi/test_docs.py": "the documented examples answer as documented",
    "tests/fapi/test_ws_docs.py": "the documented stream examples answer as documented",
    "tests/freqtrade/": "freqtrade's own loop over the wire format",
    "tests/strategies/test_docs.py": "the documented strategy examples run",
    "tests/strategies/test_sandbox_isolation.py": "the operating system's isolation of a child",
    "tests/strategies/test_hostile_sources.py": "the sandbox's answers to hostile sources",
}

# `make test` runs the two halves side by side (PAPERTRADE_TEST_SPLIT=1), and the suite takes as
# long as the longer one: these areas, which run once, run in the PostgreSQL half there, so the
# two end together. Run alone, the SQLite half runs them as well (`make test-sqlite` is still
# the whole suite without PostgreSQL).
SPLIT = os.environ.get("PAPERTRADE_TEST_SPLIT") == "1"
ONCE_IN_POSTGRES_HALF = (
    "tests/fapi/test_node_client.py",
    "tests/fapi/test_other_clients.py",
    "tests/fapi/test_stream_clients.py",
    "tests/fapi/test_docs.py",
    "tests/strategies/test_docs.py",
    "tests/strategies/test_sandbox_isolation.py",
    "tests/strategies/test_hostile_sources.py",
    "tests/web/test_t",
)

_current: pytest.Item | None = None


def opens_database(item: pytest.Item) -> bool:
    fixtures = set(getattr(item, "fixturenames", ()))
    marked = any(item.get_closest_marker(name) for name in ("database", "one_database"))
    return marked or bool(DATABASE_FIXTURES & fixtures)


def runs_on_postgres(item: pytest.Item) -> bool:
    return opens_database(item) and item.get_closest_marker("one_database") is None


def check_declared(what: str) -> None:
    """Fail the running test if it opens a database without saying so (see the module's doc)."""
    if _current is not None and not opens_database(_current):
        pytest.fail(
            f"{_current.nodeid} opens a database ({what}) without saying so: request "
            "`uses_database` or mark it `database` (tests/databases.py)",
            pytrace=False,
        )


_undeclared: list[str] = []
# The test whose work this is: set while a test runs, and carried into the tasks it starts (and
# into SQLAlchemy's greenlets). A task an earlier test left running (an app still stopping)
# carries that test's id, so its connections are not blamed on the test running now.
_started_by: ContextVar[str | None] = ContextVar("papertrade_test_started_by", default=None)


def _on_connect(dbapi_connection: object, record: object) -> None:
    """Note a connection opened by an undeclared test; it fails at teardown (see below).

    Raising here would fail inside the app's own code, where a request could turn it into a 500
    and hide the reason."""
    test = _current
    if test is not None and _started_by.get() == test.nodeid and not opens_database(test):
        _undeclared.append(test.nodeid)


@pytest.fixture(scope="session")
def uses_database() -> None:
    """Requested by fixtures that create a database of their own."""


def pytest_configure(config: pytest.Config) -> None:
    from sqlalchemy import event
    from sqlalchemy.pool import Pool

    event.listen(Pool, "connect", _on_connect)
    config.addinivalue_line("markers", "database: the test opens a database without a fixture")
    config.addinivalue_line(
        "markers",
        "one_database: uses a database but checks nothing that differs between SQLite and "
        "PostgreSQL; runs in the SQLite half only",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    from tests.conftest import PG_URL

    for item in items:
        path = item.nodeid.split("::", 1)[0]
        if any(path.startswith(prefix) for prefix in ONE_DATABASE):
            item.add_marker(pytest.mark.one_database)
    if PG_URL:
        kept = [item for item in items if runs_on_postgres(item) or _given_to_postgres(item)]
    else:
        kept = [item for item in items if not _given_to_postgres(item)]
    kept_ids = {id(item) for item in kept}
    dropped = [item for item in items if id(item) not in kept_ids]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


def _given_to_postgres(item: pytest.Item) -> bool:
    """A once-only test that `make test` runs in the PostgreSQL half (see SPLIT)."""
    path = item.nodeid.split("::", 1)[0]
    return SPLIT and not runs_on_postgres(item) and path.startswith(ONCE_IN_POSTGRES_HALF)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item) -> Iterator[None]:
    global _current
    _current = item
    started_by = _started_by.set(item.nodeid)
    try:
        return (yield)
    finally:
        _current = None
        _started_by.reset(started_by)
        _undeclared.clear()


@pytest.hookimpl(trylast=True)  # after the fixtures' own teardown, which a failure here would skip
def pytest_runtest_teardown(item: pytest.Item) -> None:
    if item.nodeid in _undeclared:
        check_declared("a connection through SQLAlchemy")


# A migrated schema, made once per test process and copied for each new database: migrating an
# empty database at every app start took seconds of the suite's time for each of hundreds of
# databases. Only empty databases are filled; a test that writes an old schema first (the
# upgrade tests) still gets the real migration at start.
_templates: dict[str, str] = {}


async def from_template(url: str) -> None:
    """Give the empty (or not yet created) database at `url` the current schema by copying."""
    from sqlalchemy.engine import make_url

    target = make_url(url)
    if target.get_backend_name() == "sqlite":
        if target.database and target.database != ":memory:" and _empty(Path(target.database)):
            _copy(await _sqlite_template(), Path(target.database))
        return
    await _postgres_from_template(target.database or "")


def _empty(path: Path) -> bool:
    return not path.exists() or path.stat().st_size == 0


def _copy(template: str, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(template, path)


async def _migrated(url: str) -> None:
    from papertrade import migrate
    from papertrade.db import Database

    database = Database(url)
    try:
        await migrate.upgrade(database.engine)
    finally:
        await database.engine.dispose()


async def _sqlite_template() -> str:
    if "sqlite" not in _templates:
        path = Path(tempfile.mkdtemp(prefix="papertrade-template-")) / "template.db"
        await _migrated(f"sqlite+aiosqlite:///{path}")
        # Closing the last connection checkpoints the write-ahead log into the file we copy.
        assert _empty(path.with_name(path.name + "-wal")), "the template's WAL was not merged"
        _templates["sqlite"] = str(path)
    return _templates["sqlite"]


async def _postgres_from_template(name: str) -> None:
    from tests.conftest import PG_URL

    assert PG_URL is not None
    server = PG_URL.replace("postgresql+asyncpg://", "postgresql://")
    conn = await asyncpg.connect(server.rsplit("/", 1)[0] + f"/{name}")
    try:
        tables = await conn.fetchval("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'")
    finally:
        await conn.close()
    if tables:
        return
    if "postgresql" not in _templates:
        template = f"papertrade_template_{os.getpid()}"
        conn = await asyncpg.connect(server)
        try:
            await conn.execute(f'DROP DATABASE IF EXISTS "{template}" WITH (FORCE)')
            await conn.execute(f'CREATE DATABASE "{template}"')
        finally:
            await conn.close()
        await _migrated(PG_URL.rsplit("/", 1)[0] + f"/{template}")
        _templates["postgresql"] = template
    conn = await asyncpg.connect(server)
    try:
        await conn.execute(f'DROP DATABASE "{name}" WITH (FORCE)')
        await conn.execute(f'CREATE DATABASE "{name}" TEMPLATE "{_templates["postgresql"]}"')
    finally:
        await conn.close()


def pytest_sessionfinish(session: pytest.Session) -> None:
    from tests.conftest import _drop_postgres_database

    if "sqlite" in _templates:
        shutil.rmtree(Path(_templates["sqlite"]).parent, ignore_errors=True)
    if "postgresql" in _templates:
        asyncio.run(_drop_postgres_database(_templates["postgresql"]))
