"""Binding an account to Telegram by deep link, through the real bot webhook and the real
python-telegram-bot client talking to a fake Bot API on 127.0.0.1."""

from typing import Any

from sqlalchemy import update

from papertrade.config import Settings
from papertrade.models import TelegramLink
from tests.conftest import sign_up
from tests.telegram.helpers import link_code, message_update, processed, send_update, telegram_app


async def test_a_deep_link_binds_once_and_the_bot_says_so(isolated_settings: Settings) -> None:
    async with telegram_app(isolated_settings) as (app, fake):
        user = await sign_up(app)
        assert (await user.get("/v1/tg/status")).json()["bound"] is False
        code = await link_code(user)
        assert len(code) == 43
        start = message_update(f"/start {code}", tg_user=501)
        answer = await send_update(app, start)
        assert answer.status_code == 200 and answer.json() == {"ok": True, "duplicate": False}
        assert await processed(app, start["update_id"]) == "bind"
        (reply,) = await fake.wait_for(1)
        assert reply.chat_id == 501 and reply.parse_mode == "HTML"
        assert reply.text.startswith(f"Linked to {user.email[:2]}***@example.com")
        status = (await user.get("/v1/tg/status")).json()
        assert status["bound"] is True and status["status"] == "active"
        assert status["username"] == "ann"

        again = message_update(f"/start {code}", tg_user=777)  # single use
        await send_update(app, again)
        assert await processed(app, again["update_id"]) == "bind refused"
        await fake.wait_for(2)
        assert "invalid or has expired" in fake.to(777)[0]


async def test_a_resent_update_is_processed_once(isolated_settings: Settings) -> None:
    async with telegram_app(isolated_settings) as (app, fake):
        hello = message_update("/start", tg_user=502)
        assert (await send_update(app, hello)).json()["duplicate"] is False
        assert await processed(app, hello["update_id"]) == "welcome"
        assert (await send_update(app, hello)).json() == {"ok": True, "duplicate": True}
        await fake.wait_for(1)
        other = message_update("/start", tg_user=503)  # a later update goes through after it
        await send_update(app, other)
        await processed(app, other["update_id"])
        await fake.wait_for(2)
        assert len(fake.to(502)) == 1  # the re-sent update was not answered twice


async def test_the_webhook_refuses_a_wrong_or_missing_secret(isolated_settings: Settings) -> None:
    async with telegram_app(isolated_settings) as (app, fake):
        update_ = message_update("/start", tg_user=504)
        for secret in (None, "", "webhook-secret_0123456788", "x" * 300):
            refused = await send_update(app, update_, secret=secret)
            assert refused.status_code == 401, secret
            assert refused.json()["error"] == "invalid_telegram_secret"
        bodies: list[Any] = [[], {"update_id": "1"}, {"update_id": True}, {"message": {}}]
        for body in bodies:
            bad = await send_update(app, body)
            assert bad.status_code == 400 and bad.json()["error"] == "invalid_update", body
        assert fake.sent == []


async def test_rebinding_moves_the_binding_and_unlink_removes_it(
    isolated_settings: Settings,
) -> None:
    async with telegram_app(isolated_settings) as (app, fake):
        first, second = await sign_up(app), await sign_up(app)
        bind_first = message_update(f"/start {await link_code(first)}", tg_user=600)
        await send_update(app, bind_first)
        assert await processed(app, bind_first["update_id"]) == "bind"
        bind_second = message_update(f"/start {await link_code(second)}", tg_user=600)
        await send_update(app, bind_second)
        assert await processed(app, bind_second["update_id"]) == "bind"
        assert (await first.get("/v1/tg/status")).json()["bound"] is False
        assert (await second.get("/v1/tg/status")).json()["bound"] is True

        unlink = message_update("/unlink", tg_user=600)
        await send_update(app, unlink)
        assert await processed(app, unlink["update_id"]) == "unlink"
        assert (await second.get("/v1/tg/status")).json()["bound"] is False
        await fake.wait_for(3)
        assert fake.to(600)[-1].startswith("Unlinked.")

        bind_again = message_update(f"/start {await link_code(second)}", tg_user=600)
        await send_update(app, bind_again)
        await processed(app, bind_again["update_id"])
        unbound = await second.delete("/v1/tg/binding")
        assert unbound.status_code == 200 and unbound.json()["bound"] is False
        assert (await second.get("/v1/tg/status")).json()["bound"] is False


async def test_an_expired_link_is_refused(isolated_settings: Settings) -> None:
    async with telegram_app(isolated_settings) as (app, fake):
        user = await sign_up(app)
        code = await link_code(user)
        async with app.state.ctx.transaction() as uow:
            await uow.session.execute(update(TelegramLink).values(expires_at=1))
        start = message_update(f"/start {code}", tg_user=505)
        await send_update(app, start)
        assert await processed(app, start["update_id"]) == "bind refused"
        assert (await user.get("/v1/tg/status")).json()["bound"] is False
        await fake.wait_for(1)
        assert "invalid or has expired" in fake.to(505)[0]


async def test_without_a_bot_configured_telegram_says_so(isolated_settings: Settings) -> None:
    from tests.conftest import running_app

    async with running_app(isolated_settings) as app:
        user = await sign_up(app)
        link = await user.post("/v1/tg/link")
        assert link.status_code == 503 and link.json()["error"] == "telegram_not_configured"
        hook = await send_update(app, message_update("/start", tg_user=1))
        assert hook.status_code == 404 and hook.json()["error"] == "telegram_not_configured"
