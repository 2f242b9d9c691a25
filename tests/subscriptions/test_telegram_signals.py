"""A followed portfolio's trades reach a subscriber's Telegram as Cornix would read them (domain
rules B2.7): the open as a Cornix block with its take-profit and stop, the close as a close
notice with its PnL; the inbox keeps readable prose. Sent through the fake Bot API."""

import asyncio
from urllib.parse import urlsplit

from papertrade.config import Settings
from tests.conditional.helpers import conditional
from tests.conftest import client_for, sign_up
from tests.notifications.helpers import wait_for_inbox
from tests.subscriptions.test_subscriptions import fund_wallet, priced_portfolio, subscribe
from tests.telegram.helpers import link_code, message_update, processed, send_update, telegram_app
from tests.trading_api.helpers import market, order, positions, set_price


async def test_an_open_is_a_cornix_block_and_its_close_a_close_notice(
    isolated_settings: Settings,
) -> None:
    async with telegram_app(isolated_settings) as (app, fake):
        owner, fan = await sign_up(app), await sign_up(app)
        start = message_update(f"/start {await link_code(fan)}", tg_user=910)
        await send_update(app, start)
        assert await processed(app, start["update_id"]) == "bind"
        portfolio = await priced_portfolio(owner, "1")
        renamed = await owner.client.patch(
            f"/v1/portfolios/{portfolio['id']}",
            json={"name": "<Alpha> & co"},  # user text: escaped on Telegram
            headers=owner.write_headers(),
        )
        assert renamed.status_code == 200, renamed.text
        await fund_wallet(fan, "1")
        await subscribe(
            fan, portfolio["id"], tier="paid", channels=["inbox", "telegram"],
            events=["open", "close"],
        )  # fmt: skip

        # A limit entry with its take-profit and stop attached, filled once the price comes.
        await set_price(app, "BTCUSDT", "60500")
        leverage = await owner.post(
            f"/v1/portfolios/{portfolio['id']}/leverage", json={"symbol": "BTCUSDT", "leverage": 5}
        )
        assert leverage.status_code == 200, leverage.text
        isolated = await owner.client.put(
            f"/v1/portfolios/{portfolio['id']}/margin-type",
            json={"symbol": "BTCUSDT", "margin_type": "isolated"},
            headers=owner.write_headers(),
        )
        assert isolated.status_code == 200, isolated.text
        await order(
            owner,
            portfolio_id=portfolio["id"],
            symbol="BTCUSDT",
            side="buy",
            type="limit",
            price="60000",
            quantity="0.01",
            take_profit="63000",
            stop_loss="57000",
        )
        await set_price(app, "BTCUSDT", "59990")
        await wait_for_inbox(fan, 2)  # "Subscription subscribed", the open
        await set_price(app, "BTCUSDT", "63000")  # the take-profit closes the position
        for _ in range(600):
            if not await positions(owner, portfolio["id"]):
                break
            await asyncio.sleep(0.05)
        await fake.wait_for(4)  # "Linked…", "Subscription subscribed", the open, the close

        linked, subscribed, opened, closed = fake.to(910)
        page = f"{isolated_settings.public_base_url}/p/{portfolio['code']}"
        assert linked.startswith("Linked") and subscribed.startswith("<b>Subscription subscribed")
        assert opened == (
            "#BTC/USDT\n"
            "Signal Type: Regular (Long)\n"
            "Leverage: Isolated (5X)\n"
            "Entry Targets:\n"
            "1) 60000\n"
            "Take-Profit Targets:\n"
            "1) 63000\n"
            "Stop Targets:\n"
            "1) 57000\n"
            "\n"
            "&lt;Alpha&gt; &amp; co (subscription)\n"
            f'<a href="{page}">{page}</a>'
        )
        assert closed == (
            "#BTC/USDT closed at 63000 (+5% | +30 USDT)\n\n&lt;Alpha&gt; &amp; co (subscription)\n"
            f'<a href="{page}">{page}</a>'
        )
        # The footer's link is the public page of the followed portfolio, for anyone it is
        # forwarded to: the page the web app serves, and the portfolio that page reads.
        path = urlsplit(page).path
        async with client_for(app) as anyone:
            assert (await anyone.get(path)).status_code == 200
            shown = await anyone.get(f"/v1/portfolios/by_code/{path.rsplit('/', 1)[1]}")
            assert shown.status_code == 200 and shown.json()["name"] == "<Alpha> & co"
        inbox = (await fan.get("/v1/inbox")).json()
        bodies = [n["body"] for n in inbox["notifications"]]
        assert bodies[:2] == [
            "<Alpha> & co closed 0.01 BTCUSDT at 63,000.0, PnL +30.00 USDT (+5.00 %).",
            "<Alpha> & co opened long 0.01 BTCUSDT at 60,000.0 "
            "(take-profit 63,000.0; stop-loss 57,000.0).",
        ]


async def test_a_trailing_stop_placed_without_a_price_yet_is_told_in_plain_text(
    isolated_settings: Settings,
) -> None:
    # A modify signal is no Cornix block; a trailing stop has no trigger price until it moves.
    async with telegram_app(isolated_settings) as (app, fake):
        owner, fan = await sign_up(app), await sign_up(app)
        start = message_update(f"/start {await link_code(fan)}", tg_user=911)
        await send_update(app, start)
        assert await processed(app, start["update_id"]) == "bind"
        portfolio = await priced_portfolio(owner, "1")
        await fund_wallet(fan, "1")
        await subscribe(
            fan, portfolio["id"], tier="paid", channels=["telegram"], events=["modify"]
        )  # fmt: skip
        await set_price(app, "BTCUSDT", "60000")
        await market(owner, portfolio["id"], "BTCUSDT", "buy", "0.01")
        await conditional(
            owner,
            portfolio_id=portfolio["id"],
            symbol="BTCUSDT",
            side="sell",
            type="trailing_stop_market",
            callback_rate="1",
            close_position=True,
        )
        await fake.wait_for(3)  # "Linked…", "Subscription subscribed", the stop placed
        assert fake.to(911)[2] == (
            "<b>Signal: BTCUSDT modify</b>\n"
            "signals: take-profit / stop-loss placed on BTCUSDT (trailing_stop_market)."
        )
