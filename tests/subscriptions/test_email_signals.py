"""A followed portfolio's trade reaches a subscriber who chose email on the subscription, end to
end: the leader's fill, the subscription signal, the mail in the SMTP sink with the trade and an
unsubscribe link that works without signing in."""

import asyncio
from typing import Any
from urllib.parse import urlsplit

from papertrade.config import Settings
from tests.conftest import User, client_for, sign_up
from tests.mail.helpers import link_in, mail_app, text_of
from tests.notifications.helpers import inbox
from tests.subscriptions.test_subscriptions import fund_wallet, priced_portfolio, subscribe
from tests.trading_api.helpers import market, set_price

OPENED = "Signal: ETHUSDT long"


async def _signals_in_inbox(user: User, count: int, within: float = 20) -> list[dict[str, Any]]:
    """The user's `OPENED` notifications once there are `count` (the consumer runs after the
    leader's commit; queued mail is written in the same transaction)."""
    deadline = asyncio.get_running_loop().time() + within
    while True:
        listed = (await inbox(user, kind="subscription"))["notifications"]
        found = [n for n in listed if n["title"] == OPENED]
        if len(found) >= count:
            return found
        assert asyncio.get_running_loop().time() < deadline, f"inbox has {listed}"
        await asyncio.sleep(0.05)


async def _signal_mail_queued(user: User) -> int:
    """How many signal mails were queued for the user (the mail history, sent or not)."""
    history = await user.get("/v1/user/email/messages")
    assert history.status_code == 200, history.text
    return sum(1 for m in history.json()["messages"] if m["subject"] == OPENED)


async def test_a_signal_is_mailed_to_a_subscriber_who_chose_email(
    isolated_settings: Settings,
) -> None:
    async with mail_app(isolated_settings) as (app, sink):
        owner, fan, quiet = await sign_up(app), await sign_up(app), await sign_up(app)
        portfolio = await priced_portfolio(owner, "1")
        await fund_wallet(fan, "1")
        await fund_wallet(quiet, "1")
        # Only the subscription says email: the subscriber changed no notification preference.
        await subscribe(
            fan, portfolio["id"], tier="paid", channels=["inbox", "email"], events=["open"]
        )
        await subscribe(quiet, portfolio["id"], tier="paid", channels=["inbox"], events=["open"])

        await set_price(app, "ETHUSDT", "3000")
        await market(owner, portfolio["id"], "ETHUSDT", "buy", "0.1")
        for _ in range(400):
            mailed = [m for m in sink.to(fan.email) if m["Subject"] == OPENED]
            if mailed:
                break
            await asyncio.sleep(0.05)
        assert mailed, [m["Subject"] for m in sink.to(fan.email)]
        body = text_of(mailed[0])
        assert body.startswith("signals opened long 0.1 ETHUSDT at 3,000.00.")
        # Not account mail: it carries the unsubscribe links, and the one for this kind works.
        one_click = urlsplit(mailed[0]["List-Unsubscribe"].strip("<>"))
        assert one_click.geturl() == link_in(mailed[0], "/v1/email/unsubscribe")
        async with client_for(app) as mail_client:
            done = await mail_client.post(f"{one_click.path}?{one_click.query}")
            assert done.status_code == 200 and done.json() == {"unsubscribed": "subscription"}

        # The inbox-only subscriber has the signal in the inbox and no mail of it.
        await _signals_in_inbox(quiet, 1)
        assert await _signal_mail_queued(quiet) == 0

        # Unsubscribed from this kind's mail: the next trade reaches the inbox only.
        await market(owner, portfolio["id"], "ETHUSDT", "buy", "0.1")
        await _signals_in_inbox(fan, 2)
        assert await _signal_mail_queued(fan) == 1
