"""`papertrade serve` (embedded, SQLite) whose inbox consumer takes a while over each batch, so
that a kill -9 finds fills committed and not yet in an inbox (test_inbox_crash.py).
Run: python -m tests.notifications.inbox_service <port>
"""

import asyncio
import sys
from collections.abc import Sequence

import uvicorn

from papertrade.app import create_app
from papertrade.config import get_settings
from papertrade.notifications.consumers import INBOX, TYPES, notify
from papertrade.outbox.dispatcher import Consumer
from papertrade.outbox.store import StoredEvent
from papertrade.uow import AsyncWork


def main() -> None:
    settings = get_settings()
    settings.var_dir.mkdir(parents=True, exist_ok=True)

    async def slow_notify(uow: AsyncWork, events: Sequence[StoredEvent]) -> None:
        await notify(uow, events, settings.public_base_url.rstrip("/"))
        await asyncio.sleep(0.1)  # after the rows went in, before the commit: the window of a kill

    # Under the inbox's name: it replaces the real one.
    consumer = Consumer(INBOX, slow_notify, types=TYPES, from_start=True)
    app = create_app(settings, consumers=[consumer])
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")


if __name__ == "__main__":
    main()
