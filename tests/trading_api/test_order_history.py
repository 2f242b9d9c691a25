"""Placing an order reads what it needs by index, never the portfolio's whole order history,
and on SQLite a busy portfolio's state is read once, not once per group commit.

Every order of a group commit checks its client order id and the margin its portfolio's resting
orders reserve. When either read walked every order ever placed, order throughput fell as the
history grew (a MARKET-order benchmark lost a fifth of its rate within ten seconds). Reading the
portfolio, its positions and that margin again for every group cost a third of the writer
thread's time.
"""

import asyncio
import re
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from fastapi import FastAPI
from sqlalchemy import Engine, event, make_url, select

from papertrade.engine import snapshots
from papertrade.jobs.catalogue import JOBS
from papertrade.models import JobRecord
from tests.conftest import PG_URL, User
from tests.trading_api.helpers import limit, market, order, set_price

pytestmark = pytest.mark.skipif(bool(PG_URL), reason="reads SQLite's query plans")


@contextmanager
def statements_of_the_order_writer() -> Iterator[list[tuple[str, Any]]]:
    """The SQL the group commit's writer thread runs while the block runs."""
    seen: list[tuple[str, Any]] = []

    def record(_conn: Any, _cursor: Any, sql: str, params: Any, *_: Any) -> None:
        if threading.current_thread().name.startswith("sqlite-writer"):
            seen.append((sql, params))

    event.listen(Engine, "before_cursor_execute", record)
    try:
        yield seen
    finally:
        event.remove(Engine, "before_cursor_execute", record)


async def test_an_order_reads_open_orders_and_named_client_ids_by_index(
    user: User, app: FastAPI
) -> None:
    await set_price(app, "BTCUSDT", "50000")
    pid = (await user.portfolio(initial_balance="1000000"))["id"]
    for n in range(5):  # some history: filled, resting and client-named orders
        await market(user, pid, "BTCUSDT", "buy", "0.01", client_order_id=f"old-{n}")
        await limit(user, pid, "buy", "0.01", "40000")
    # A change committed elsewhere, so that the writer thread reads the portfolio afresh.
    await user.post(f"/v1/portfolios/{pid}/leverage", json={"symbol": "ETHUSDT", "leverage": 5})

    burst = [  # concurrent, so that the group commit places several in one unit of work
        {
            "portfolio_id": pid,
            "symbol": "BTCUSDT",
            "side": "buy",
            "type": "market",
            "quantity": "0.01",
            "client_order_id": f"new-{n}",
        }
        for n in range(8)
    ]
    # A second portfolio's orders, so that a group asks about the ids of two portfolios.
    other = (await user.portfolio(initial_balance="1000000"))["id"]
    burst += [body | {"portfolio_id": other} for body in burst[:4]]
    with statements_of_the_order_writer() as seen:
        placed = await asyncio.gather(*(order(user, **body) for body in burst))
    assert [o["status"] for o in placed] == ["filled"] * 12

    reads = [(sql, params) for sql, params in seen if re.search(r"FROM orders\b", sql)]
    client_ids = [r for r in reads if "client_order_id" in r[0]]
    reserved = [r for r in reads if "reserved_margin" in r[0]]
    assert any(len(params) > 2 for _, params in client_ids), "several ids checked at once"
    assert reserved, "the reserved margin sum ran"
    database = make_url(app.state.ctx.settings.database_url).database
    assert database is not None
    with sqlite3.connect(database) as connection:

        def plan(sql: str, params: Any) -> str:
            rows = connection.execute("EXPLAIN QUERY PLAN " + sql, params)
            return " | ".join(row[3] for row in rows)

        for sql, params in client_ids:
            steps = plan(sql, params)
            assert "SCAN orders" not in steps, f"{sql}\nreads every order: {steps}"
            assert "client_order_id=?" in steps, f"{sql}\nreads the portfolio's history: {steps}"
        for sql, params in reserved:
            steps = plan(sql, params)
            assert "portfolio_id=? AND is_open=?" in steps, (
                f"{sql}\nreads more than open orders: {steps}"
            )


def _burst(pid: int, prefix: str) -> list[dict[str, Any]]:
    return [
        {
            "portfolio_id": pid,
            "symbol": "BTCUSDT",
            "side": "buy",
            "type": "market",
            "quantity": "0.01",
            "client_order_id": f"{prefix}-{n}",
        }
        for n in range(4)
    ]


def _reads_of_the_portfolio(seen: list[tuple[str, Any]]) -> list[str]:
    return [
        sql
        for sql, _ in seen
        if sql.startswith("SELECT")
        and (re.search(r"FROM (portfolios|positions)\b", sql) or "reserved_margin" in sql)
    ]


async def _first_scheduled_runs_done(app: FastAPI, within: float = 30) -> None:
    """Until every scheduled job's first run (sent when the app starts) has finished: some
    commit through other connections (the sealing of finished days, ...), which rightly makes
    the writer read the portfolio again, so a burst timed against them would measure them."""
    settings = app.state.ctx.settings
    names = {job.name for job in JOBS if job.every is not None and job.every(settings) > 0}
    finished: set[str] = set()
    async with asyncio.timeout(within):
        while not names <= finished:
            async with app.state.ctx.db.reader() as session:
                done = select(JobRecord.name).where(JobRecord.finished_at.is_not(None))
                finished = set(await session.scalars(done))
            await asyncio.sleep(0.05)


async def test_the_writer_reads_a_portfolio_once_while_nothing_else_changes_it(
    user: User, app: FastAPI
) -> None:
    await set_price(app, "BTCUSDT", "50000")
    pid = (await user.portfolio(initial_balance="1000000"))["id"]
    await asyncio.gather(*(order(user, **body) for body in _burst(pid, "first")))
    await _first_scheduled_runs_done(app)

    with statements_of_the_order_writer() as seen:
        placed = await asyncio.gather(*(order(user, **body) for body in _burst(pid, "again")))
    assert [o["status"] for o in placed] == ["filled"] * 4
    assert _reads_of_the_portfolio(seen) == []
    assert any("client_order_id" in sql for sql, _ in seen), "client ids are still checked"

    # A change through another connection (a leverage change) makes it read the portfolio again.
    await user.post(f"/v1/portfolios/{pid}/leverage", json={"symbol": "BTCUSDT", "leverage": 10})
    with statements_of_the_order_writer() as seen:
        await order(user, **_burst(pid, "after")[0])
    assert len(_reads_of_the_portfolio(seen)) == 3


async def test_equity_snapshots_leave_the_writer_its_memory(user: User, app: FastAPI) -> None:
    """The periodic equity marks write only their own rows: the busy portfolio's next orders
    are not slowed by reading it again every snapshot interval."""
    await set_price(app, "BTCUSDT", "50000")
    pid = (await user.portfolio(initial_balance="1000000"))["id"]
    await _first_scheduled_runs_done(app)
    await order(user, **_burst(pid, "first")[0])
    assert await snapshots.record_snapshots(app.state.ctx) >= 1
    with statements_of_the_order_writer() as seen:
        placed = await order(user, **_burst(pid, "again")[0])
    assert placed["status"] == "filled"
    assert _reads_of_the_portfolio(seen) == []
