"""Subscribing to a public strategy: its executed signals reach the subscriber's chosen
channels (every event kind, free: its history is public anyway), from any of its deployments,
on Telegram linking to the strategy's page; a private strategy is not found, the paid tier and a
body naming both or neither are refused."""

from typing import Any

from fastapi import FastAPI

from papertrade.config import Settings
from papertrade.strategies import live
from tests.conftest import User, sign_up
from tests.notifications.helpers import wait_for_inbox
from tests.strategies.test_live import ALWAYS_LONG, deploy, one_bar  # noqa: F401
from tests.telegram.helpers import link_code, message_update, processed, send_update, telegram_app
from tests.trading_api.helpers import market, set_price


async def test_a_strategys_executed_signal_reaches_its_subscriber(
    app: FastAPI, user_factory: Any
) -> None:
    author: User = await user_factory()
    fan: User = await user_factory()
    await set_price(app, "BTCUSDT", "50000")
    portfolio = await author.portfolio(visibility="private")  # the trades' portfolio is private
    sid, _ = await deploy(author, ALWAYS_LONG, portfolio["id"], name="Always long")

    subscribed = await fan.post(
        "/v1/subscribe", json={"strategy_id": sid, "channels": ["inbox"], "events": ["open"]}
    )
    assert subscribed.status_code == 201, subscribed.text
    body = subscribed.json()
    assert (body["strategy_id"], body["portfolio_id"], body["tier"]) == (sid, None, "free")
    again = await fan.post("/v1/subscribe", json={"strategy_id": sid})
    assert again.status_code == 409 and again.json()["error"] == "subscription_exists"
    mine = (await fan.get("/v1/subscriptions/my")).json()
    assert [(s["strategy_id"], s["status"]) for s in mine] == [(sid, "active")]

    await live.evaluate_due(app.state.ctx)
    notes = await wait_for_inbox(fan, 2, kind="subscription")  # "subscribed", then the signal
    (note,) = [n for n in notes if n["title"].startswith("Signal")]
    assert note["title"] == "Signal: BTCUSDT long"
    assert note["body"] == "Strategy Always long opened long 0.01 BTCUSDT at 50,000.0.", note

    cancelled = await fan.post(f"/v1/subscriptions/{body['id']}/cancel")
    assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"


async def test_who_may_follow_a_strategy_and_how(app: FastAPI, user_factory: Any) -> None:
    author: User = await user_factory()
    stranger: User = await user_factory()
    created = await author.post(
        "/v1/strategies",
        json={"kind": "dsl", "name": "secret", "source": ALWAYS_LONG, "visibility": "private"},
    )
    assert created.status_code == 201, created.text
    private = created.json()["id"]

    hidden = await stranger.post("/v1/subscribe", json={"strategy_id": private})
    assert hidden.status_code == 404 and set(hidden.json()) == {"error", "msg"}
    own = await author.post("/v1/subscribe", json={"strategy_id": private})
    assert own.status_code == 201 and own.json()["tier"] == "owner"

    public = (
        await author.post(
            "/v1/strategies",
            json={"kind": "dsl", "name": "open", "source": ALWAYS_LONG, "visibility": "public"},
        )
    ).json()["id"]
    paid = await stranger.post("/v1/subscribe", json={"strategy_id": public, "tier": "paid"})
    assert paid.status_code == 409 and paid.json()["error"] == "subscription_not_paid"
    assert "free" in paid.json()["msg"]
    portfolio = await author.portfolio()
    for wrong in ({}, {"strategy_id": public, "portfolio_id": portfolio["id"]}):
        refused = await stranger.post("/v1/subscribe", json=wrong)
        assert refused.status_code == 422, refused.text
        assert "portfolio_id or strategy_id" in refused.json()["msg"]


async def test_a_strategys_close_tells_its_pnl(app: FastAPI, user_factory: Any) -> None:
    author: User = await user_factory()
    fan: User = await user_factory()
    await set_price(app, "BTCUSDT", "50000")
    portfolio = await author.portfolio()
    await market(author, portfolio["id"], "BTCUSDT", "buy", "0.01")  # the long it will close
    await set_price(app, "BTCUSDT", "51000")
    closer = "symbol BTCUSDT\ntimeframe 1m\nwhen close > 0 then close long\n"
    sid, _ = await deploy(author, closer, portfolio["id"], name="Closer")
    subscribed = await fan.post("/v1/subscribe", json={"strategy_id": sid, "events": ["close"]})
    assert subscribed.status_code == 201, subscribed.text

    await live.evaluate_due(app.state.ctx)
    notes = await wait_for_inbox(fan, 2, kind="subscription")
    (note,) = [n for n in notes if n["title"].startswith("Signal")]
    # (51,000 − 50,000) × 0.01 = +10 USDT on 500 USDT of entry value: +2 %
    assert (
        note["body"]
        == "Strategy Closer closed 0.01 BTCUSDT at 51,000.0, PnL +10.00 USDT (+2.00 %)."
    ), note


async def test_a_strategys_signal_links_to_the_strategys_page(
    isolated_settings: Settings,
) -> None:
    async with telegram_app(isolated_settings) as (app, fake):
        author, fan = await sign_up(app), await sign_up(app)
        start = message_update(f"/start {await link_code(fan)}", tg_user=912)
        await send_update(app, start)
        assert await processed(app, start["update_id"]) == "bind"
        await set_price(app, "BTCUSDT", "50000")
        portfolio = await author.portfolio(visibility="private")
        sid, _ = await deploy(author, ALWAYS_LONG, portfolio["id"], name="Always long")
        followed = await fan.post(
            "/v1/subscribe", json={"strategy_id": sid, "channels": ["telegram"], "events": ["open"]}
        )
        assert followed.status_code == 201, followed.text

        await live.evaluate_due(app.state.ctx)
        await fake.wait_for(3)  # "Linked…", "Subscription subscribed", the open
        code = (await author.get(f"/v1/strategies/{sid}")).json()["code"]
        page = f"{isolated_settings.public_base_url}/s/{code}"
        # The strategy's public page, not the private portfolio it trades in.
        assert fake.to(912)[2].endswith(
            f'1) 50000\n\nStrategy Always long (subscription)\n<a href="{page}">{page}</a>'
        )
