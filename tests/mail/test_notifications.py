"""Notifications by email: the kinds a user chose, with an unsubscribe link that works without
signing in; suppressed addresses get no such mail."""

import asyncio
from urllib.parse import urlsplit

from papertrade.config import Settings
from papertrade.mail import service
from tests.conftest import client_for, sign_up
from tests.mail.helpers import link_in, mail_app, text_of
from tests.notifications.helpers import wait_for_inbox
from tests.trading_api.helpers import market, set_price


async def test_a_chosen_kind_is_mailed_with_an_unsubscribe_link_that_works(
    isolated_settings: Settings,
) -> None:
    async with mail_app(isolated_settings) as (app, sink):
        user = await sign_up(app)
        await user.client.put(
            "/v1/inbox/preferences",
            json={"preferences": {"fill": {"email": True}}},
            headers=user.write_headers(),
        )
        await set_price(app, "BTCUSDT", "50000")
        pid = (await user.portfolio())["id"]
        await market(user, pid, "BTCUSDT", "buy", "0.002")
        (mail,) = await sink.wait_for(user.email)
        assert mail["Subject"] == "BTCUSDT buy order filled"
        assert text_of(mail).startswith("Bought 0.002 BTCUSDT at 50,000.0")
        one_click = urlsplit(mail["List-Unsubscribe"].strip("<>"))
        assert mail["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
        assert one_click.geturl() == link_in(mail, "/v1/email/unsubscribe")

        async with client_for(app) as mail_client:  # RFC 8058: the client POSTs, no sign-in
            done = await mail_client.post(f"{one_click.path}?{one_click.query}")
            assert done.status_code == 200 and done.json() == {"unsubscribed": "fill"}
        prefs = {
            p["kind"]: p for p in (await user.get("/v1/inbox/preferences")).json()["preferences"]
        }
        assert prefs["fill"]["email"] is False and prefs["fill"]["inbox"] is True

        await market(user, pid, "BTCUSDT", "sell", "0.002")
        await wait_for_inbox(user, 2)
        await asyncio.sleep(0.5)  # the time the sender would take
        assert len(sink.to(user.email)) == 1


async def test_a_suppressed_address_gets_no_notification_mail(isolated_settings: Settings) -> None:
    async with mail_app(isolated_settings) as (app, sink):
        user = await sign_up(app)
        secret = app.state.ctx.settings.resolved_secret_key()
        every = service.unsubscribe_token(secret, user.id, service.ALL_KINDS)
        async with client_for(app) as browser:
            done = await browser.get("/v1/email/unsubscribe", params={"token": every})
            assert done.json() == {"unsubscribed": "all"}
        state = (await user.get("/v1/user/email")).json()
        assert state["suppressed"] is True and state["suppressed_reason"] == "unsubscribed"
        await user.client.put(
            "/v1/inbox/preferences",
            json={"preferences": {"fill": {"email": True}}},
            headers=user.write_headers(),
        )
        await set_price(app, "ETHUSDT", "3000")
        pid = (await user.portfolio())["id"]
        await market(user, pid, "ETHUSDT", "buy", "0.1")
        await wait_for_inbox(user, 1)
        await asyncio.sleep(0.5)
        assert sink.to(user.email) == []
        # account mail still goes: the owner asked for it
        await user.post("/v1/user/email/verification")
        (mail,) = await sink.wait_for(user.email)
        assert mail["Subject"] == "Confirm your email address"
        # a token signed for another user does not work for this one
        forged = every.replace(f"{user.id}.", f"{user.id + 1}.", 1)
        async with client_for(app) as browser:
            refused = await browser.get("/v1/email/unsubscribe", params={"token": forged})
            assert refused.status_code == 400
