"""A database at 0020_period_roots upgrades in place: the Telegram updates still waiting take the
chat their body names, so they keep their turn behind the chat's earlier ones; processed ones,
and a body that names no chat, stay without."""

import orjson
from sqlalchemy import select, text
from sqlalchemy.ext.asyncio import create_async_engine

from papertrade.config import Settings
from papertrade.models import TelegramUpdate
from tests.conftest import running_app
from tests.foundation.test_email_case import _migrate
from tests.telegram.helpers import message_update

BEFORE = "0020_period_roots"


async def test_waiting_updates_take_their_chat(isolated_settings: Settings) -> None:
    stored = {
        1: (message_update("close BTCUSDT", tg_user=555, update_id=1), None),  # waiting
        2: (message_update("/start", tg_user=556, update_id=2), 7),  # processed at 7
        3: ({"update_id": 3, "message": {"chat": {"id": "not a number"}}}, None),
    }
    engine = create_async_engine(isolated_settings.database_url)
    try:
        await _migrate(engine, BEFORE)
        async with engine.begin() as connection:
            for update_id, (update, processed_at) in stored.items():
                await connection.execute(
                    text(
                        "INSERT INTO telegram_updates (update_id, body, received_at, "
                        "processed_at, outcome) VALUES (:id, :body, 1, :done, '')"
                    ),
                    {"id": update_id, "body": orjson.dumps(update).decode(), "done": processed_at},
                )
    finally:
        await engine.dispose()

    async with running_app(isolated_settings) as app, app.state.ctx.db.reader() as session:
        rows = await session.execute(  # migrated on the way in
            select(TelegramUpdate.update_id, TelegramUpdate.chat_id, TelegramUpdate.body)
        )
        found = {row.update_id: (row.chat_id, row.body) for row in rows}
    assert {update_id: chat for update_id, (chat, _) in found.items()} == {1: 555, 2: None, 3: None}
    assert found[1][1] == orjson.dumps(stored[1][0]).decode()  # the body as it was
