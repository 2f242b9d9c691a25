"""Faults on the way to the exchange (item 5 of issue #20): the connection dropped before or
after the order reached the exchange, and a request that hangs past the timeout. Each mirrored
fill ends as exactly one exchange order: nothing doubled, nothing lost."""

from decimal import Decimal

from fastapi import FastAPI

from tests.live.conftest import Exchange
from tests.live.test_live import (
    exchange_orders,
    exchange_position,
    prices,
    registered,
    settled,
)
from tests.trading_api.helpers import limit, market


async def test_a_connection_dropped_after_the_order_went_in_does_not_double_it(
    service: FastAPI, exchange: Exchange
) -> None:
    user, source, account_id = await registered(service, exchange)
    await prices(service, exchange, "50000")
    exchange.faults.drop_after_order = 1
    await market(user, source, "BTCUSDT", "buy", "0.1")
    rows = await settled(user, account_id, 1)
    assert rows[0]["status"] == "sent" and rows[0]["exchange_order_id"], rows[0]
    assert await exchange_position(exchange) == Decimal("0.1")
    assert len(await exchange_orders(exchange)) == 1
    assert exchange.faults.orders_seen == 1  # looked up, found, never sent again


async def test_a_connection_dropped_before_the_order_arrived_sends_it_once(
    service: FastAPI, exchange: Exchange
) -> None:
    user, source, account_id = await registered(service, exchange)
    await prices(service, exchange, "50000")
    exchange.faults.drop_before_order = 1
    await market(user, source, "BTCUSDT", "buy", "0.1")
    rows = await settled(user, account_id, 1)
    assert rows[0]["status"] == "sent" and rows[0]["attempts"] == 2, rows[0]
    assert await exchange_position(exchange) == Decimal("0.1")
    assert len(await exchange_orders(exchange)) == 1
    assert exchange.faults.orders_seen == 2  # the dropped one (never arrived), then the order


async def test_a_request_that_times_out_before_arriving_is_sent_once_later(
    service: FastAPI, exchange: Exchange
) -> None:
    user, source, account_id = await registered(service, exchange)
    await prices(service, exchange, "50000")
    exchange.faults.hang_before_order = 1
    await market(user, source, "BTCUSDT", "buy", "0.05")
    await market(user, source, "BTCUSDT", "buy", "0.05")  # a second fill, unaffected
    rows = await settled(user, account_id, 2)
    assert [r["status"] for r in rows] == ["sent", "sent"], rows
    assert await exchange_position(exchange) == Decimal("0.1")
    assert len(await exchange_orders(exchange)) == 2
    assert exchange.faults.orders_seen == 3


async def test_a_key_with_withdrawal_rights_is_refused_where_the_exchange_reports_it(
    service: FastAPI, exchange: Exchange
) -> None:
    """Binance's apiRestrictions, asked through ccxt: withdrawals enabled → refused; disabled
    → accepted and shown as such; a host without the endpoint → `not_reported`."""
    user, source, _account_id = await registered(service, exchange)  # no endpoint: accepted
    exchange.faults.restrictions = {
        "ipRestrict": False,
        "createTime": 1700000000000,
        "enableReading": True,
        "enableFutures": True,
        "enableSpotAndMarginTrading": False,
        "enableWithdrawals": True,
        "enableInternalTransfer": False,
        "permitsUniversalTransfer": False,
    }
    body = {"label": "w", "api_key": exchange.api_key, "api_secret": exchange.api_secret}
    refused = await user.post("/v1/live/accounts", json=body)
    assert refused.status_code == 400, refused.text
    assert refused.json() == {
        "error": "live_key_refused",
        "msg": "The key can withdraw funds; create one without withdrawal rights.",
    }
    exchange.faults.restrictions["enableWithdrawals"] = False
    accepted = await user.post("/v1/live/accounts", json=body)
    assert accepted.status_code == 201, accepted.text
    assert accepted.json()["withdrawals"] == "disabled"
    assert exchange.faults.restriction_queries == 3  # every registration asked

    # rotating to a key that can withdraw is refused the same way
    exchange.faults.restrictions["enableWithdrawals"] = True
    rotated = await user.post(
        f"/v1/live/accounts/{accepted.json()['id']}/rotate",
        json={"api_key": exchange.api_key, "api_secret": exchange.api_secret},
    )
    assert rotated.status_code == 400 and rotated.json()["error"] == "live_key_refused"
    listed = (await user.get("/v1/live/accounts")).json()
    assert [a["withdrawals"] for a in listed] == ["not_reported", "disabled"]
    assert source  # the first account's source is untouched


async def test_the_kill_switch_cancels_again_when_the_connection_is_dropped(
    service: FastAPI, exchange: Exchange
) -> None:
    user, _source, account_id = await registered(service, exchange)
    await prices(service, exchange, "50000")
    for _ in range(2):  # the second kill reuses the client (and connection) of the first
        await limit(exchange.user, exchange.portfolio_id, "buy", "0.01", "40000")
        exchange.faults.drop_before_cancel = 1  # the first cancel never reaches the exchange
        answer = await user.post("/v1/live/kill", json={"close_positions": False})
        assert answer.status_code == 200, answer.text
        assert answer.json() == [
            {
                "account_id": account_id,
                "cancelled_symbols": ["BTCUSDT"],
                "closed_symbols": [],
                "error": None,
            }
        ]
        assert exchange.faults.drop_before_cancel == 0
        assert [o for o in await exchange_orders(exchange) if o["status"] == "new"] == []
