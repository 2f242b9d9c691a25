"""Daily email digests: N users on `daily`, each with 5 unread notifications of a mailed kind;
the job's `send_due` serves them in runs of 200 users (one transaction each). Prints the CPU
and wall time per run and per user; every digest is checked to be queued exactly once.

Run: .venv/bin/python bench/bench_digest.py [--users 2000]
"""

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from server import machine
from sqlalchemy import func, insert, select

from papertrade.app import create_app
from papertrade.config import Settings
from papertrade.mail import digest
from papertrade.models import EmailDigest, EmailMessage, NotificationPreference, User
from papertrade.notifications import service
from papertrade.notifications.kinds import Message


async def run(database_url: str, var_dir: Path, users: int) -> tuple[int, float, float]:
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
                {"email": f"d{i}@bench.example", "password_hash": "x", "display_name": ""}
                for i in range(users)
            ]
            await uow.session.execute(insert(User), rows)
        async with ctx.db.reader() as session:
            ids = list(await session.scalars(select(User.id)))
        async with ctx.transaction() as uow:
            await uow.session.execute(
                insert(EmailDigest), [{"user_id": i, "frequency": "daily"} for i in ids]
            )
            await uow.session.execute(
                insert(NotificationPreference),
                [
                    {
                        "user_id": i,
                        "kind": "system",
                        "inbox": True,
                        "telegram": False,
                        "email": True,
                    }
                    for i in ids
                ],
            )
        for n in range(5):
            async with ctx.transaction() as uow:
                await service.notify_many(uow, ids, "system", Message(f"Notice {n}", "Body."))
        runs = 0
        cpu, wall = time.process_time(), time.perf_counter()
        while True:
            async with ctx.transaction() as uow:
                done = await digest.send_due(uow, settings.public_base_url)
            runs += 1
            if done["sent"] == 0:
                break
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        async with ctx.db.reader() as session:
            queued = await session.scalar(
                select(func.count()).select_from(EmailMessage).where(EmailMessage.kind == "digest")
            )
        assert queued == users, (queued, users)
    return runs, cpu, wall


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--users", type=int, default=2000)
    args = parser.parse_args()
    print(machine())
    with tempfile.TemporaryDirectory() as tmp:
        runs, cpu, wall = await run(f"sqlite+aiosqlite:///{tmp}/bench.db", Path(tmp), args.users)
    print("| users | job runs | CPU s | wall s | CPU ms per digest |")
    print("|---:|---:|---:|---:|---:|")
    print(f"| {args.users} | {runs} | {cpu:.2f} | {wall:.2f} | {1000 * cpu / args.users:.2f} |")


if __name__ == "__main__":
    asyncio.run(main())
