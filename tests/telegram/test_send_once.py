"""What "once" means for Telegram (docs/notifications.md): a send that certainly never reached
the Bot API (nothing listening: a connect error) is retried and arrives once; one that reached
it and then lost its connection, or whose sender was killed with -9 mid-request, is marked
`interrupted`, never sent again, and listed so in GET /v1/tg/messages."""

import asyncio
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import select

from papertrade.config import Settings
from papertrade.models import TelegramMessage
from tests.conftest import PG_URL, running_app, sign_up
from tests.fakes.telegram_api import TOKEN, fake_telegram
from tests.liveserver import free_port
from tests.mail.test_send_crash import start
from tests.reliability.crashkit import Service
from tests.telegram.helpers import SECRET, link_code, message_update, processed, send_update


async def _statuses(app: Any) -> list[tuple[str, int, str]]:
    async with app.state.ctx.db.reader() as session:
        rows = await session.execute(
            select(TelegramMessage.status, TelegramMessage.attempts, TelegramMessage.error)
        )
        return [(r[0], r[1], r[2]) for r in rows]


async def test_a_connect_error_is_retried_and_arrives_once(isolated_settings: Settings) -> None:
    port = free_port()  # the Bot API is down: nothing listens here yet
    settings = isolated_settings.model_copy(
        update={
            "telegram_bot_token": TOKEN,
            "telegram_bot_username": "pt_bot",
            "telegram_webhook_secret": SECRET,
            "telegram_api_base_url": f"http://127.0.0.1:{port}/bot",
        }
    )
    async with running_app(settings) as app:
        user = await sign_up(app)
        start_update = message_update(f"/start {await link_code(user)}", tg_user=3001)
        await send_update(app, start_update)
        assert await processed(app, start_update["update_id"]) == "bind"
        deadline = time.monotonic() + 20
        while True:  # the reply failed to connect and waits for its retry
            found = await _statuses(app)
            if found and found[0][1] >= 1 and found[0][0] == "pending":
                break
            assert time.monotonic() < deadline, found
            await asyncio.sleep(0.05)
        assert "ConnectError" in found[0][2]
        async with fake_telegram(port) as fake:  # the Bot API comes back
            (sent,) = await fake.wait_for(1, within=30)
            assert sent.chat_id == 3001 and sent.text.startswith("Linked to")
            deadline = time.monotonic() + 10
            while (await _statuses(app))[0][0] != "sent":
                assert time.monotonic() < deadline
                await asyncio.sleep(0.05)
            assert len(fake.sent) == 1


async def _session(url: str) -> tuple[httpx.AsyncClient, dict[str, str]]:
    client = httpx.AsyncClient(base_url=url, headers={"Origin": url}, timeout=60)
    made = await client.post(
        "/v1/auth/signup",
        json={"email": f"tg-{time.time_ns()}@example.com", "password": "crash-test-pass"},
    )
    assert made.status_code == 201, made.text
    return client, {"X-CSRF-Token": client.cookies.get("csrf_token") or ""}


async def _update(url: str, update: dict[str, Any]) -> None:
    async with httpx.AsyncClient(base_url=url, timeout=60) as telegram:
        sent = await telegram.post(
            "/v1/webhook/tg", json=update, headers={"X-Telegram-Bot-Api-Secret-Token": SECRET}
        )
        assert sent.status_code == 200, sent.text


async def _until(check: Any, what: str, within: float = 60) -> None:
    deadline = time.monotonic() + within
    while not await check():
        assert time.monotonic() < deadline, what
        await asyncio.sleep(0.05)


@pytest.mark.skipif(PG_URL is not None, reason="the embedded mode under test is SQLite")
async def test_kill_minus_nine_mid_send_is_reported_not_repeated(tmp_path: Path) -> None:
    async with fake_telegram() as fake:
        env = {
            "PAPERTRADE_TELEGRAM_BOT_TOKEN": TOKEN,
            "PAPERTRADE_TELEGRAM_BOT_USERNAME": "pt_bot",
            "PAPERTRADE_TELEGRAM_WEBHOOK_SECRET": SECRET,
            "PAPERTRADE_TELEGRAM_API_BASE_URL": fake.base_url,
        }
        service = Service(tmp_path, free_port(), env=env)
        client: httpx.AsyncClient | None = None
        try:
            start(service)
            client, csrf = await _session(service.url)
            link = (await client.post("/v1/tg/link", headers=csrf)).json()["url"]
            await _update(
                service.url, message_update(f"/start {link.rsplit('=', 1)[1]}", tg_user=3002)
            )
            await fake.wait_for(1, within=60)  # "Linked to …"
            made = await client.post(
                "/v1/portfolios", json={"name": "tg", "initial_balance": "10000"}, headers=csrf
            )
            pid = made.json()["id"]

            async def history() -> list[dict[str, Any]]:
                page = await client.get("/v1/tg/messages")
                assert page.status_code == 200, page.text
                return list(page.json()["messages"])

            fake.hold = True  # the fill's notification reaches the API, its answer never comes
            order = {"portfolio_id": pid, "symbol": "BTCUSDT", "side": "buy"}
            filled = await client.post(
                "/v1/order", json={**order, "type": "market", "quantity": "0.002"}, headers=csrf
            )
            assert filled.status_code == 201, filled.text

            async def held() -> bool:
                return fake.held

            await _until(held, "the notification never reached the fake Bot API")
            assert [m["status"] for m in await history()] == ["sending"]
            await asyncio.to_thread(service.kill)
            fake.hold = False
            start(service)

            async def reported() -> bool:
                return [m["status"] for m in await history()] == ["interrupted"]

            await _until(reported, "the interrupted message was not reported")
            closed = await client.post(
                "/v1/order",
                json={**order, "side": "sell", "type": "market", "quantity": "0.002"},
                headers=csrf,
            )
            assert closed.status_code == 201, closed.text

            async def next_sent() -> bool:
                return [m["status"] for m in await history()] == ["sent", "interrupted"]

            await _until(next_sent, "the next notification was not sent")
        finally:
            if client is not None:
                await client.aclose()
            service.stop()
        fills = [s.text for s in fake.sent if "filled" in s.text]
        assert len(fills) == 2  # the interrupted one once (it did reach the API), the next once
        assert "buy order filled" in fills[0] and "sell order filled" in fills[1]
