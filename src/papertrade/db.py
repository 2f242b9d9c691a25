"""Database engine, sessions and the unit of work."""

import asyncio
import contextlib
import sqlite3
import time
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from typing import Any, TypeVar

from sqlalchemy import Engine, MetaData, Row, Select, create_engine, event, make_url
from sqlalchemy.exc import InvalidatePoolError, OperationalError
from sqlalchemy.ext.asyncio import (
    AsyncConnection,
    AsyncEngine,
    AsyncSession,
    async_sessionmaker,
    create_async_engine,
)
from sqlalchemy.orm import DeclarativeBase, Session

from papertrade.faults.outage import CommitOutcomeUnknown, OutageLog, is_outage
from papertrade.pgread import DriverRead, compile_read, fetch_row, fetch_rows

T = TypeVar("T")
AnySession = Session | AsyncSession  # code that only adds, changes and emits takes either


# For a locking read of rows that hold money (portfolios, their positions, wallets): the rows
# are loaded as they are now into the objects the session already holds for them. Without it the
# ORM keeps the values of an earlier read without a lock in the same unit of work (an outbox
# consumer's, say), which another transaction may have changed since: a balance booked on them
# undid that change (tests/foundation/test_locked_rows.py). Only there: on every locking read
# (a session listener) the order path measured up to 300 µs more CPU per order.
CURRENT = {"populate_existing": True}


class WriterMemory:
    """What SQLite's writer thread remembers from one unit of work to the next, by part (see
    Database._remembered): each package keeps its own typed part, as in uow.UnitOfWork."""

    def __init__(self) -> None:
        self._parts: dict[type, object] = {}

    def part(self, kind: type[T]) -> T:
        found = self._parts.get(kind)
        if found is None:
            found = self._parts[kind] = kind()
        return found  # type: ignore[return-value]


NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


# How long a statement waits for SQLite's write lock (another unit of work's, here or in another
# process) before it fails with "database is locked", answered 503 (faults/outage.py).
SQLITE_BUSY_TIMEOUT_S = 30.0


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)


class Database:
    """One engine plus a session factory; SQLite writers are serialised in-process."""

    def __init__(self, url: str, pool_size: int = 20, max_overflow: int = 20):
        self.url = url
        self.is_sqlite = url.startswith("sqlite")
        # A pool deep enough for a busy server: past it, every checkout opens a new connection
        # (on aiosqlite, a new thread) and closes it again.
        kwargs: dict[str, Any] = {"pool_size": pool_size, "max_overflow": max_overflow}
        if self.is_sqlite:
            kwargs["connect_args"] = {
                "timeout": SQLITE_BUSY_TIMEOUT_S,
                "factory": SQLiteConnection,
            }
        self.engine: AsyncEngine = create_async_engine(url, **kwargs)
        if self.is_sqlite:
            event.listen(self.engine.sync_engine, "connect", _sqlite_pragmas)
        self.sessions = async_sessionmaker(self.engine, expire_on_commit=False)
        # Reads: the same pool; on PostgreSQL in autocommit (reader(), single_read()).
        self._reads: AsyncEngine = (
            self.engine
            if self.is_sqlite
            else self.engine.execution_options(isolation_level="AUTOCOMMIT")
        )
        self.outages = OutageLog()
        if not self.is_sqlite:
            _ping_when_in_doubt(self.engine.sync_engine, self.outages)
        # SQLite has one writer; queueing here beats SQLITE_BUSY retries and lock-upgrade deadlocks.
        self.write_lock = asyncio.Lock()
        self._writer_engine: Engine | None = None
        self._writer_thread: ThreadPoolExecutor | None = None
        self._writer_memory = WriterMemory()
        self._writer_data_version: int | None = None
        self._loop_reads: Engine | None = None
        self._driver_reads: dict[int, DriverRead] = {}  # by id(statement): built once each

    @asynccontextmanager
    async def unit_of_work(
        self, *, keeps_writer_memory: bool | Callable[[], bool] = False
    ) -> AsyncIterator[AsyncSession]:
        """A session whose work commits on success and rolls back on any error.

        A connection lost during the commit raises CommitOutcomeUnknown (the change may have
        been made); lost at any earlier point, nothing was committed.

        `keeps_writer_memory`: the caller writes no row the order writer remembers (portfolios,
        positions, orders: an outbox consumer's own tables and cursor), so on SQLite its commit
        need not make the writer forget (see _remembered). A callable is asked after the work,
        for callers that know only then whether they wrote such rows."""
        async with contextlib.AsyncExitStack() as stack:
            keep = False
            if self.is_sqlite:
                await stack.enter_async_context(self.write_lock)
                keep = keeps_writer_memory is not False and await self._writer_version_holds()
            session = await stack.enter_async_context(self.sessions())
            transaction = await session.begin()
            try:
                yield session
                wrote = bool(session.new or session.dirty or session.deleted)
                await session.flush()  # a failure here still leaves nothing committed
            except BaseException:
                with contextlib.suppress(Exception):  # a broken connection cannot roll back
                    await transaction.rollback()
                raise
            try:
                await transaction.commit()
            except Exception as exc:
                if is_outage(exc):
                    self.outages.failed(exc)
                    raise CommitOutcomeUnknown() from exc
                raise
            if self.is_sqlite and wrote:  # a write committed: a full disk has room again
                self.outages.succeeded(certain=True)
            if callable(keeps_writer_memory) and keep:
                keep = keeps_writer_memory()
            if keep:  # committed, and still under the write lock: nobody else wrote meanwhile
                self._writer_data_version = await self._on_writer(self._writer_version)

    async def run_unit(
        self, work: Callable[[Session, WriterMemory | None], T], *, remember: bool = False
    ) -> T:
        """Run the synchronous `work` in one unit of work and return its result.

        On SQLite the whole unit of work runs on a dedicated writer thread with the sqlite3
        driver: one hand-off per unit of work instead of several thread hops per statement
        (aiosqlite), which is what bounds a group of orders. Elsewhere it runs on the event loop
        over the async driver.

        `remember`: the work keeps what it finds in the WriterMemory it is handed current with
        everything it writes, so the writer thread may hand it to the next such unit of work
        (see _remembered). Any other unit of work on the writer thread makes it forget, and
        work that is handed None must not reuse anything.
        """
        if not self.is_sqlite:
            async with self.unit_of_work() as session:
                return await session.run_sync(work, None)
        async with self.write_lock:
            loop = asyncio.get_running_loop()
            return await loop.run_in_executor(self._writer(), self._run_on_writer, work, remember)

    def _writer(self) -> ThreadPoolExecutor:
        if self._writer_thread is None:
            self._writer_thread = ThreadPoolExecutor(1, thread_name_prefix="sqlite-writer")
            # One thread only ever uses this engine's one connection (its data_version, below,
            # is a property of the connection).
            self._writer_engine = create_engine(
                make_url(self.url).set(drivername="sqlite"),
                connect_args={
                    "timeout": SQLITE_BUSY_TIMEOUT_S,
                    "check_same_thread": False,
                    "factory": SQLiteConnection,
                },
                pool_size=1,
                max_overflow=0,
            )
            event.listen(self._writer_engine, "connect", _writer_connection)
            event.listen(self._writer_engine, "begin", _begin_immediate)
        return self._writer_thread

    def _run_on_writer(
        self, work: Callable[[Session, WriterMemory | None], T], remember: bool
    ) -> T:
        assert self._writer_engine is not None
        with Session(self._writer_engine, expire_on_commit=False) as session:
            try:
                with session.begin():
                    memory = None
                    if remember:
                        memory = self._remembered(session)
                    else:  # its writes would not change this connection's data_version
                        self._forget()
                    result = work(session, memory)
                self.outages.succeeded(certain=True)  # committed: a full disk has room again
                return result
            except BaseException:
                self._forget()  # what the failed unit changed in memory never reached the database
                raise

    async def _writer_version_holds(self) -> bool:
        """Whether the writer's memory is still good (no other connection committed since)."""
        if self._writer_thread is None or self._writer_data_version is None:
            return False
        return await self._on_writer(self._writer_version) == self._writer_data_version

    async def _on_writer(self, work: Callable[[], T]) -> T:
        return await asyncio.get_running_loop().run_in_executor(self._writer(), work)

    def _writer_version(self) -> int:
        assert self._writer_engine is not None
        with self._writer_engine.connect() as connection:
            version = int(connection.exec_driver_sql("PRAGMA data_version").scalar_one())
            connection.rollback()  # its BEGIN IMMEDIATE must not outlive this read
        return version

    def _forget(self) -> None:
        self._writer_memory = WriterMemory()
        self._writer_data_version = None

    def _remembered(self, session: Session) -> WriterMemory:
        """What the writer's earlier units of work left in memory, while it still holds.

        Every other write to the database (the engine's fills, cancels, funding, the web app,
        another process) commits through another connection. SQLite's data_version of this
        connection changes exactly when one of those commits, so while it stands still, rows
        this thread read and wrote are as it left them. Read under BEGIN IMMEDIATE: nobody else
        can commit until this unit of work ends.
        """
        version = session.connection().exec_driver_sql("PRAGMA data_version").scalar_one()
        if version != self._writer_data_version:
            self._writer_memory = WriterMemory()
            self._writer_data_version = version
        return self._writer_memory

    @asynccontextmanager
    async def reader(self) -> AsyncIterator[AsyncSession]:
        """A session for reads only (no lock, nothing committed). On PostgreSQL its statements
        run in autocommit: at READ COMMITTED each statement sees its own snapshot inside a
        transaction too, so the BEGIN and ROLLBACK round trips around them bought nothing but
        their cost (on SQLite a read begins no transaction either)."""
        async with self.sessions(bind=self._reads) as session:
            yield session

    @asynccontextmanager
    async def single_read(self) -> AsyncIterator[AsyncConnection]:
        """A connection for one read-only statement (its own snapshot, so no transaction is
        needed): on PostgreSQL in autocommit, which spares the BEGIN and ROLLBACK round trips
        around it; on SQLite a plain connection (a read there begins no transaction)."""
        async with self._reads.connect() as connection:
            yield connection

    async def read_row(
        self, statement: Select[Any], params: Mapping[str, Any]
    ) -> dict[str, Any] | None:
        """The first row of one read-only statement as {column: value}, for the hottest reads
        (a bot's poll).

        On SQLite it runs on the event loop's own thread (see read()). On PostgreSQL it goes
        to asyncpg itself (pgread.py), and back through SQLAlchemy should the driver fail."""
        if self.is_sqlite:
            try:
                with self._loop_reader().connect() as connection:
                    return _as_dict(connection.execute(statement, params).first())
            except OperationalError as exc:
                if not _busy(exc):
                    raise
        async with self.single_read() as connection:
            if not self.is_sqlite:
                try:
                    return await fetch_row(connection, self._driver_read(statement), params)
                except Exception:  # SQLAlchemy's run of the statement tells what it was
                    pass
            return _as_dict((await connection.execute(statement, params)).first())

    async def read_all(
        self, reads: Sequence[tuple[Select[Any], Mapping[str, Any]]]
    ) -> list[list[dict[str, Any]]]:
        """Every row of each read-only statement, as {column: value}, on one connection: what
        read_row does for one row, for a read of several statements (a bot's account poll). Each
        statement sees its own snapshot, as in a reader() session."""
        if self.is_sqlite:
            try:
                with self._loop_reader().connect() as connection:
                    return [_as_dicts(connection.execute(s, p)) for s, p in reads]
            except OperationalError as exc:
                if not _busy(exc):
                    raise
        async with self.single_read() as connection:
            if not self.is_sqlite:
                try:
                    return [await fetch_rows(connection, self._driver_read(s), p) for s, p in reads]
                except Exception:  # SQLAlchemy's run of the statements tells what it was
                    pass
            return [_as_dicts(await connection.execute(s, p)) for s, p in reads]

    def _driver_read(self, statement: Select[Any]) -> DriverRead:
        read = self._driver_reads.get(id(statement))
        if read is None:
            read = self._driver_reads[id(statement)] = compile_read(statement, self.engine.dialect)
        return read

    async def read(self, work: Callable[[Session], T]) -> T:
        """Run the synchronous, read-only `work` with a session and return its result (the
        rows it loaded stay readable: columns only, no lazy loads).

        On SQLite it runs on the event loop's own thread, over a connection of its own that
        never waits for a lock: a point read from SQLite's page cache takes microseconds, while
        aiosqlite's thread hops around each statement (checkout, statement, fetch, return) cost
        a few hundred microseconds of CPU. A WAL reader is seldom refused; when it is ("database
        is locked"), the work runs again as below. Only reads that stay small belong here: the
        loop waits for them, disk reads included. Elsewhere, in a reader() session."""
        if self.is_sqlite:
            try:
                with Session(self._loop_reader(), expire_on_commit=False) as session:
                    return work(session)
            except OperationalError as exc:
                if not _busy(exc):
                    raise
        async with self.reader() as session:
            return await session.run_sync(work)

    def _loop_reader(self) -> Engine:
        if self._loop_reads is None:
            # The loop only ever holds a connection between two awaits, so one is enough;
            # the overflow is for a read made from another thread by mistake, not a queue.
            self._loop_reads = create_engine(
                make_url(self.url).set(drivername="sqlite"),
                # No busy timeout: a locked database is answered at once, never waited for.
                connect_args={
                    "timeout": 0,
                    "check_same_thread": False,
                    "factory": SQLiteConnection,
                },
                pool_size=1,
                max_overflow=4,
            )
            event.listen(self._loop_reads, "connect", _loop_reader_connection)
        return self._loop_reads

    async def dispose(self) -> None:
        await self.engine.dispose()
        if self._loop_reads is not None:
            self._loop_reads.dispose()
        if self._writer_thread is not None:
            assert self._writer_engine is not None
            self._writer_thread.submit(self._writer_engine.dispose).result()
            self._writer_thread.shutdown()


# A pooled connection is pinged before use (a round trip: as much as a cheap read's own
# statement) only when in doubt: it has rested longer than this, or the database failed lately.
PING_AFTER_IDLE_S = 5.0
PING_AFTER_FAILURE_S = 60.0


def _ping_when_in_doubt(engine: Engine, outages: OutageLog) -> None:
    """SQLAlchemy's pool_pre_ping, skipped for a connection that was in use moments ago while
    the database has not failed lately: it answered then. A connection that died since all the
    same (the server restarted without any request failing first) fails its statement, which
    is answered with 503 and makes SQLAlchemy discard every pooled connection, as a failed ping
    does. While the database is down, and for a minute after any failure, every checkout pings,
    so the connections an outage killed are replaced before a request uses one."""
    dialect = engine.dialect

    def checked_in(_dbapi_connection: Any, record: Any) -> None:
        if record is not None:
            record.info[_USED_AT] = time.monotonic()

    def fresh(_dbapi_connection: Any, record: Any) -> None:
        record.info.pop(_USED_AT, None)

    def checkout(dbapi_connection: Any, record: Any, _proxy: Any) -> None:
        used_at = record.info.get(_USED_AT)
        if used_at is not None and (
            time.monotonic() - used_at > PING_AFTER_IDLE_S
            or outages.failed_within(PING_AFTER_FAILURE_S)
        ):
            try:
                dialect.do_ping(dbapi_connection)
            except Exception as exc:
                # As pool_pre_ping: this connection and every older one are replaced.
                raise InvalidatePoolError() from exc
        outages.succeeded()  # a connection answered (again), or is fresh from the server

    event.listen(engine, "checkin", checked_in)
    event.listen(engine, "connect", fresh)
    event.listen(engine, "checkout", checkout)


_USED_AT = "papertrade_used_at"


def _as_dict(row: Row[Any] | None) -> dict[str, Any] | None:
    return None if row is None else dict(row._mapping)


def _as_dicts(rows: Iterable[Row[Any]]) -> list[dict[str, Any]]:
    return [dict(row._mapping) for row in rows]


class SQLiteConnection(sqlite3.Connection):
    """Every SQLite connection of the service: it ends its transaction before it closes.

    SQLAlchemy closes a connection whose statement was cut off (its unit of work's task
    cancelled mid-statement: an app stopping its background work, a cancelled request or job).
    A statement with rows left unread (a write's RETURNING, as the ORM's inserts have, or a
    read) keeps a closed connection alive until Python frees its cursor, and SQLite ends the
    transaction only then: until the garbage collector ran, the connection held SQLite's write
    lock, and every other write waited out the busy timeout and failed with "database is
    locked". Rolled back first, the lock goes with the close (the rollback aborts the statement).
    """

    def close(self) -> None:
        with contextlib.suppress(sqlite3.Error):  # closed already, or the rollback failed
            if self.in_transaction:
                self.rollback()
        super().close()


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute(f"PRAGMA busy_timeout={round(SQLITE_BUSY_TIMEOUT_S * 1000)}")
    cursor.close()


def _writer_connection(dbapi_connection: Any, record: Any) -> None:
    _sqlite_pragmas(dbapi_connection, record)
    dbapi_connection.isolation_level = None  # SQLAlchemy's "begin" event issues BEGIN instead


def _busy(exc: OperationalError) -> bool:
    """SQLite refused for a lock held elsewhere (any extended code of BUSY or LOCKED)."""
    code = getattr(exc.orig, "sqlite_errorcode", None)
    return code is not None and code & 0xFF in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)


def _loop_reader_connection(dbapi_connection: Any, _record: Any) -> None:
    # Not _sqlite_pragmas: setting the journal mode may wait for a lock. WAL is a property of
    # the file, set by the engine's own connections before any read comes here.
    dbapi_connection.execute("PRAGMA query_only=ON")  # never writes


def _begin_immediate(connection: Any) -> None:
    # Take SQLite's write lock when the unit of work starts, not at its first write: what it
    # reads (the highest order id, balances) cannot change before it writes.
    connection.exec_driver_sql("BEGIN IMMEDIATE")
