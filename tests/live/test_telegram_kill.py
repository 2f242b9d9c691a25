"""The kill switch from Telegram: a bound user sends /kill, confirms with the code the bot
gave, and the switch fires at the exchange; the bot answers the report per account. Unbound
users and wrong codes fire nothing."""

import asyncio
import re
from collections.abc import AsyncIterator
from decimal import Decimal
from pathlib import Path

import pytest
from fastapi import FastAPI

from tests.conftest import _drop_postgres_database
from tests.fakes.telegram_api import FakeTelegram
from tests.live.conftest import Exchange, _settings
from tests.live.test_live import exchange_position, registered, settled
from tests.telegram.helpers import link_code, message_update, processed, send_update, telegram_app
from tests.trading_api.helpers import limit, market, set_price


@pytest.fixture
async def bot(tmp_path: Path, exchange: Exchange) -> AsyncIterator[tuple[FastAPI, FakeTelegram]]:
    settings, database = await _settings(
        tmp_path,
        "tgservice",
        live_exchange_url=exchange.url,
        live_exchange_timeout_ms=1500,
        # No reconciliation: its drift notice (the exchange's own resting order) would reach
        # the bound chat between a command and the bot's answer to it.
        live_reconcile_every_s=0,
    )
    try:
        async with telegram_app(settings) as (app, fake):
            yield app, fake
    finally:
        if database:
            await _drop_postgres_database(database)


async def say(app: FastAPI, fake: FakeTelegram, tg_user: int, text: str) -> tuple[str, str]:
    """Post as the user; (the outcome recorded, the bot's answer)."""
    before = len(fake.to(tg_user))
    update = message_update(text, tg_user=tg_user)
    await send_update(app, update)
    outcome = await processed(app, update["update_id"], within=30)
    deadline = asyncio.get_running_loop().time() + 15
    while len(fake.to(tg_user)) <= before:
        assert asyncio.get_running_loop().time() < deadline, "the bot did not answer"
        await asyncio.sleep(0.05)
    return outcome, fake.to(tg_user)[before]


async def test_kill_from_telegram_after_confirmation(
    bot: tuple[FastAPI, FakeTelegram], exchange: Exchange
) -> None:
    app, fake = bot
    user, source, account_id = await registered(app, exchange)
    await set_price(app, "BTCUSDT", "50000")
    await set_price(exchange.app, "BTCUSDT", "50000")
    await market(user, source, "BTCUSDT", "buy", "0.1")
    await settled(user, account_id, 1)
    await limit(exchange.user, exchange.portfolio_id, "buy", "0.01", "40000")

    stranger = 7001  # not bound to anybody: /kill is only help for them
    assert (await say(app, fake, stranger, "/kill"))[0] == "help"

    start = message_update(f"/start {await link_code(user)}", tg_user=7002)
    await send_update(app, start)
    assert await processed(app, start["update_id"]) == "bind"
    deadline = asyncio.get_running_loop().time() + 15
    while not fake.to(7002):
        assert asyncio.get_running_loop().time() < deadline
        await asyncio.sleep(0.05)

    outcome, asked = await say(app, fake, 7002, "/kill")
    assert outcome == "kill asked" and "1 live account(s)" in asked, asked
    match = re.search(r"/kill close ([0-9a-f]{8})", asked)
    assert match is not None, asked
    wrong = "0" * 8 if match.group(1) != "0" * 8 else "1" * 8
    assert (await say(app, fake, 7002, f"/kill close {wrong}"))[0] == "kill refused"
    assert (await user.get(f"/v1/live/accounts/{account_id}")).json()["status"] == "active"
    assert (await say(app, fake, stranger, f"/kill close {match.group(1)}"))[0] == "help"

    outcome, report = await say(app, fake, 7002, f"/kill close {match.group(1)}")
    assert outcome == "kill", report
    assert "my sub-account: stopped; open orders cancelled: BTCUSDT" in report, report
    assert "positions closed: BTCUSDT" in report, report
    account = (await user.get(f"/v1/live/accounts/{account_id}")).json()
    assert account["status"] == "killed" and account["kill_reason"] == "telegram /kill"
    assert await exchange_position(exchange) == Decimal(0)
