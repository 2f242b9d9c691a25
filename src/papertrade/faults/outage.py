"""The database going away (or filling up): told apart from bugs, answered with 503 (507 for a
full disk) and logged once per outage instead of once per request.

Whether a request's change was made is known except in one case: the connection broke while
the commit was on its way. Every other failure happened before the commit, so the transaction
was rolled back and nothing was executed. `Database.unit_of_work` raises `CommitOutcomeUnknown`
for that one case; clients then look the order up by its client order id once the database is
back.
"""

import logging
import sqlite3
import time

from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError

from papertrade.errors import PapertradeError

log = logging.getLogger("papertrade.faults")
RETRY_AFTER_S = 5

NOT_EXECUTED = "The database is unreachable; this request was not executed. Retry in a few seconds."
OUTCOME_UNKNOWN = (
    "The database became unreachable while this request was being committed: whether it was "
    "executed is unknown. Once the service is back, look the order up by its client order id "
    "(placing it again with the same client order id is refused if it was executed)."
)
BUSY = (
    "The database stayed busy with other writes; this request was not executed. Retry in a few "
    "seconds."
)
CONFLICT = (
    "The database stopped this request to settle a conflict with other writes made at the same "
    "moment; it was not executed. Retry it."
)
# PostgreSQL's deadlock_detected and serialization_failure: it rolled the transaction back.
PG_CONFLICTS = frozenset({"40P01", "40001"})
STORAGE_FULL = (
    "The server's storage is full; this request was not executed. Retry once space is freed."
)


class DatabaseUnavailable(PapertradeError):
    """The database could not be reached; nothing of this request was committed."""

    status_code = 503
    code = "service_unavailable"
    outcome_known = True

    def __init__(self, message: str = NOT_EXECUTED):
        super().__init__(message)
        self.retry_after = RETRY_AFTER_S


class CommitOutcomeUnknown(DatabaseUnavailable):
    """The connection broke during the commit: the change may or may not have been made."""

    outcome_known = False

    def __init__(self) -> None:
        super().__init__(OUTCOME_UNKNOWN)


class StorageFull(PapertradeError):
    """SQLite could not write: the disk (or the database's quota) is full."""

    status_code = 507
    code = "storage_full"

    def __init__(self) -> None:
        super().__init__(STORAGE_FULL)
        self.retry_after = 30


def is_storage_full(exc: BaseException) -> bool:
    original = exc.orig if isinstance(exc, DBAPIError) else exc
    return isinstance(original, sqlite3.OperationalError) and "disk is full" in str(original)


def is_busy(exc: BaseException) -> bool:
    """SQLite's write lock stayed taken past the busy timeout (db.SQLITE_BUSY_TIMEOUT_S): the
    statement did nothing, and its unit of work is rolled back."""
    original = exc.orig if isinstance(exc, DBAPIError) else exc
    if not isinstance(original, sqlite3.OperationalError):
        return False
    code = getattr(original, "sqlite_errorcode", None)
    if code is not None:
        return int(code) & 0xFF == sqlite3.SQLITE_BUSY  # extended codes: SQLITE_BUSY_SNAPSHOT…
    return "database is locked" in str(original)


def is_conflict(exc: BaseException) -> bool:
    """PostgreSQL broke a lock cycle (or a serialization conflict) by rolling this transaction
    back. Lock order keeps the service's own writes out of cycles; this is the answer if one is
    missed: 503 "not executed", never a 500."""
    original = exc.orig if isinstance(exc, DBAPIError) else exc
    return getattr(original, "sqlstate", None) in PG_CONFLICTS


def is_outage(exc: BaseException) -> bool:
    """The database (not the request) failed: unreachable, restarting, or the connection broke."""
    if isinstance(exc, DatabaseUnavailable):
        return True
    if isinstance(exc, DBAPIError):
        if exc.connection_invalidated:
            return True
        if isinstance(exc.orig, sqlite3.Error):
            return False  # SQLite is a file: its errors are not outages (a full disk aside)
        if isinstance(exc, OperationalError | InterfaceError):
            return True
        # The driver's own error sits under SQLAlchemy's adapter of it.
        return _is_network(exc.orig) or _is_network(getattr(exc.orig, "__cause__", None))
    return _is_network(exc)


def _is_network(exc: BaseException | None) -> bool:
    # asyncpg raises these before SQLAlchemy can wrap them (connecting) or on a broken socket.
    if exc is None:
        return False
    if isinstance(exc, OSError | TimeoutError | ConnectionError):
        return True
    name = type(exc).__name__
    return name in {
        "ConnectionDoesNotExistError",
        "CannotConnectNowError",
        "AdminShutdownError",
        "ConnectionFailureError",
        "InterfaceError",
    }


def as_unavailable(exc: BaseException) -> PapertradeError | None:
    """The error to answer with for a database failure, or None when it is not one."""
    if isinstance(exc, DatabaseUnavailable | StorageFull):
        return exc
    if is_storage_full(exc):
        return StorageFull()
    if is_outage(exc):
        return DatabaseUnavailable()
    if is_busy(exc):
        return DatabaseUnavailable(BUSY)
    if is_conflict(exc):
        return DatabaseUnavailable(CONFLICT)
    return None


class OutageLog:
    """One warning when the database goes away and one when it is back, whatever the traffic.

    Many tasks use the database at once: one that got its answer just before the outage may
    report success just after another reported the failure. So, unless `certain` (SQLite,
    whose writes are serialised), a success counts only once no failure came for QUIET_S."""

    QUIET_S = 1.0

    def __init__(self) -> None:
        self.down_reason: str | None = None
        self._last_failure = 0.0

    @property
    def down(self) -> bool:
        return self.down_reason is not None

    def failed_within(self, seconds: float) -> bool:
        """Whether a failure was reported in the last `seconds` (or the database is down)."""
        return self.down or time.monotonic() - self._last_failure < seconds

    def failed(self, exc: BaseException) -> None:
        if is_conflict(exc):  # one transaction stopped to break a lock cycle: the database is up
            log.warning("database conflict, a transaction was not executed: %s", _describe(exc))
            return
        self._last_failure = time.monotonic()
        if self.down_reason is None:
            self.down_reason = _describe(exc)
            log.warning("database unavailable: %s", self.down_reason)

    def succeeded(self, *, certain: bool = False) -> None:
        if self.down_reason is None:
            return
        if not certain and time.monotonic() - self._last_failure < self.QUIET_S:
            return
        log.warning("database available again (it was: %s)", self.down_reason)
        self.down_reason = None


def _describe(exc: BaseException) -> str:
    if isinstance(exc, StorageFull) or is_storage_full(exc):
        return "storage is full"
    original: BaseException = exc
    if isinstance(exc, DatabaseUnavailable) and exc.__cause__ is not None:
        original = exc.__cause__
    if isinstance(original, DBAPIError) and original.orig is not None:
        original = original.orig
    lines = str(original).strip().splitlines()
    return f"{type(original).__name__}: {lines[0] if lines else ''}"[:200]


def log_failure(logger: logging.Logger, what: str, exc: BaseException, outages: OutageLog) -> None:
    """For background loops: a database outage is told once (OutageLog), anything else with
    its traceback."""
    if is_outage(exc) or is_busy(exc) or is_conflict(exc):
        outages.failed(exc)
    else:
        logger.error("%s", what, exc_info=exc)
