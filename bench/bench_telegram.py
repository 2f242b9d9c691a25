"""Telegram sends never go faster than the documented limits: 300 messages to 30 chats through
the real sender and python-telegram-bot against the fake Bot API on 127.0.0.1, then the most
messages seen in any second, overall and to one chat, next to the limits (25/s, 1/s).

Run: .venv/bin/python bench/bench_telegram.py [--messages 300] [--chats 30]
"""

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from server import machine

from papertrade.app import create_app
from papertrade.config import Settings
from papertrade.tg import service
from tests.fakes.telegram_api import TOKEN, fake_telegram


def most_in_a_second(times: list[float]) -> int:
    best, start = 0, 0
    for end, at in enumerate(times):
        while at - times[start] >= 1.0:
            start += 1
        best = max(best, end - start + 1)
    return best


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=300)
    parser.add_argument("--chats", type=int, default=30)
    args = parser.parse_args()
    print(machine())
    async with fake_telegram() as fake:
        with tempfile.TemporaryDirectory() as tmp:
            settings = Settings(
                database_url=f"sqlite+aiosqlite:///{tmp}/bench.db",
                var_dir=Path(tmp),
                secret_key="bench",
                public_base_url="https://testserver",
                market_source="sim",
                sim_tick_ms=60_000,
                telegram_bot_token=TOKEN,
                telegram_bot_username="pt_bot",
                telegram_api_base_url=fake.base_url,
            )
            app = create_app(settings)
            async with app.router.lifespan_context(app):
                ctx = app.state.ctx
                started = time.monotonic()
                async with ctx.transaction() as uow:
                    for i in range(args.messages):
                        service.queue(uow, 5000 + i % args.chats, f"message {i}")
                await fake.wait_for(args.messages, within=args.messages)
                elapsed = time.monotonic() - started
    times = sorted(s.at for s in fake.sent)
    per_chat = max(
        most_in_a_second(sorted(s.at for s in fake.sent if s.chat_id == chat))
        for chat in {s.chat_id for s in fake.sent}
    )
    print(
        f"{len(fake.sent)} messages to {args.chats} chats in {elapsed:.1f} s "
        f"({len(fake.sent) / elapsed:.1f}/s); most in any second: {most_in_a_second(times)} "
        f"overall (limit {settings.telegram_global_per_s:g}), {per_chat} to one chat "
        f"(limit {settings.telegram_per_chat_per_s:g})"
    )


if __name__ == "__main__":
    asyncio.run(main())
