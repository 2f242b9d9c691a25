"""`papertrade serve` (embedded, SQLite) with one more outbox consumer, for the outbox crash test.

The consumer's effect is one row per event in `consumer_effects`, written in the unit of work
that moves its cursor; it takes a while over each batch, so that a kill -9 finds events that
were committed and not yet delivered. Run: python -m tests.reliability.outbox_service <port>
"""

import asyncio
import sqlite3
import sys
from collections.abc import Sequence

import uvicorn
from sqlalchemy import text

from papertrade.app import create_app
from papertrade.config import get_settings
from papertrade.outbox.dispatcher import Consumer
from papertrade.outbox.store import StoredEvent
from papertrade.uow import AsyncWork

CONSUMER = "crash-test"
EFFECTS = "CREATE TABLE IF NOT EXISTS consumer_effects (event_id INTEGER, type TEXT)"
INSERT = text("INSERT INTO consumer_effects VALUES (:event_id, :type)")


async def record(uow: AsyncWork, events: Sequence[StoredEvent]) -> None:
    await asyncio.sleep(0.1)  # work that takes a while: the window a kill -9 falls into
    await uow.session.execute(INSERT, [{"event_id": e.id, "type": e.type} for e in events])


def main() -> None:
    settings = get_settings()
    settings.var_dir.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(settings.var_dir / "papertrade.db") as conn:
        conn.execute(EFFECTS)
    app = create_app(settings, consumers=[Consumer(CONSUMER, record, from_start=True)])
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")


if __name__ == "__main__":
    main()
