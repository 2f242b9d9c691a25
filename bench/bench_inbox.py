"""10,000 users get one notification (a signal to its subscribers) into their inboxes: the time
from the start of the unit of work to its commit, on SQLite (and on PostgreSQL with --postgres,
at PAPERTRADE_TEST_POSTGRES_URL). Target: under 2 s. Every inbox is checked afterwards.

Run: .venv/bin/python bench/bench_inbox.py [--users 10000] [--postgres]
"""

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from inprocess import scheduled_runs_settled
from server import machine
from sqlalchemy import func, insert, select

from papertrade.app import create_app
from papertrade.config import Settings
from papertrade.models import Notification, User
from papertrade.notifications import service
from papertrade.notifications.kinds import Message
from tests.reliability.failover import fresh_database

PG_DEFAULT = "postgresql+asyncpg://postgres@127.0.0.1:5432/test"


async def run(database_url: str, var_dir: Path, users: int) -> float:
    settings = Settings(
        database_url=database_url,
        var_dir=var_dir,
        secret_key="bench",
        public_base_url="https://testserver",
        market_source="sim",
        sim_tick_ms=60_000,
    )
    app = create_app(settings)
    async with app.router.lifespan_context(app):
        ctx = app.state.ctx
        async with ctx.transaction() as uow:
            rows = [
                {"email": f"sub{i}@bench.example", "password_hash": "x", "display_name": ""}
                for i in range(users)
            ]
            await uow.session.execute(insert(User), rows)
        async with ctx.db.reader() as session:
            ids = list(await session.scalars(select(User.id)))
        message = Message("#BTC/USDT long", "Entry 67000, stop 66000, TP 68000.", {"signal_id": 1})
        await scheduled_runs_settled(app)
        started = time.perf_counter()
        async with ctx.transaction() as uow:
            delivered = await service.notify_many(uow, ids, "signal", message)
        elapsed = time.perf_counter() - started
        async with ctx.db.reader() as session:
            stored = await session.scalar(select(func.count()).select_from(Notification))
        assert delivered == users == stored, (delivered, users, stored)
    return elapsed


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--users", type=int, default=10_000)
    parser.add_argument("--postgres", action="store_true")
    args = parser.parse_args()
    print(machine())
    with tempfile.TemporaryDirectory() as tmp:
        sqlite_url = f"sqlite+aiosqlite:///{tmp}/bench.db"
        seconds = await run(sqlite_url, Path(tmp), args.users)
        print(f"SQLite: {args.users} inboxes got one notification in {seconds:.3f} s")
    if args.postgres:
        base = os.environ.get("PAPERTRADE_TEST_POSTGRES_URL", PG_DEFAULT)
        async with fresh_database(base, f"bench_inbox_{os.getpid()}") as url:
            with tempfile.TemporaryDirectory() as tmp:
                seconds = await run(url, Path(tmp), args.users)
        print(f"PostgreSQL: {args.users} inboxes got one notification in {seconds:.3f} s")


if __name__ == "__main__":
    asyncio.run(main())
