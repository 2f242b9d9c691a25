"""The longest tests start first, so that a half never ends waiting on one that started late.

pytest-xdist hands tests to its workers in collection order. A test of a minute collected near
the end starts when the rest are nearly done, and its half then runs on one worker for that
minute. These are the tests that take longest (wall time on a 2-core machine, both halves
running); they go first, in this order, and the others keep theirs.
"""

import pytest

LONGEST = (
    "tests/hostile/test_schemathesis.py",  # 65 s
    "tests/fapi/test_stream_clients.py::test_ccxt_pro_watch",  # 61 s: a minute of streams
    "tests/scaleout/test_crash_failover.py",  # 44 s
    "tests/web/test_backtest_result.py",  # 36 s
    "tests/reliability/test_outbox_crash.py",  # 20–33 s each: kill -9 under load
    "tests/notifications/test_inbox_crash.py",
    "tests/reliability/test_crash.py",
    "tests/mail/test_send_crash.py",
    "tests/copytrading/test_copy_crash.py",
)


@pytest.hookimpl(trylast=True)  # after tests/databases.py has chosen the half's tests
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    def rank(item: pytest.Item) -> int:
        return next(
            (i for i, prefix in enumerate(LONGEST) if item.nodeid.startswith(prefix)),
            len(LONGEST),
        )

    items.sort(key=rank)  # stable: the others keep the order pytest gave them
