"""A live account's key from registration to deletion: a key that cannot trade futures is
refused, the secret is stored encrypted, a rotated key is the one mirroring then uses, a deleted
account's key is gone; and the max position notional skips an order, saying why."""

from decimal import Decimal

from fastapi import FastAPI

from papertrade.models import LiveAccount
from tests.conftest import sign_up
from tests.live.conftest import Exchange
from tests.live.test_live import exchange_position, live_orders, prices, registered, settled
from tests.trading_api.helpers import market, order, positions


async def stored_secret(service: FastAPI, account_id: int) -> str | None:
    """The secret column of the account's row as the database holds it (None: no row)."""
    async with service.state.ctx.db.reader() as session:
        row = await session.get(LiveAccount, account_id)
        return None if row is None else row.api_secret_encrypted


async def test_a_key_that_cannot_trade_futures_is_refused(
    service: FastAPI, exchange: Exchange
) -> None:
    user = await sign_up(service)
    exchange.faults.can_trade = False  # the exchange's account answer says canTrade: false
    answer = await user.post(
        "/v1/live/accounts",
        json={"label": "x", "api_key": exchange.api_key, "api_secret": exchange.api_secret},
    )
    assert answer.status_code == 400, answer.text
    assert answer.json()["error"] == "live_key_refused"
    assert "cannot trade futures" in answer.json()["msg"]
    assert (await user.get("/v1/live/accounts")).json() == []


async def test_the_secret_is_encrypted_and_a_deleted_account_forgets_it(
    service: FastAPI, exchange: Exchange
) -> None:
    user, source, account_id = await registered(service, exchange)
    stored = await stored_secret(service, account_id)
    assert stored is not None and exchange.api_secret not in stored
    assert service.state.ctx.cipher.decrypt(stored) == exchange.api_secret
    listed = await user.get(f"/v1/live/accounts/{account_id}")
    assert exchange.api_secret not in listed.text

    await prices(service, exchange, "50000")
    await market(user, source, "BTCUSDT", "buy", "0.1")
    await settled(user, account_id, 1)  # mirrored orders are deleted with their account

    stranger = await sign_up(service)
    assert (await stranger.delete(f"/v1/live/accounts/{account_id}")).status_code == 404
    gone = await user.delete(f"/v1/live/accounts/{account_id}")
    assert gone.status_code == 204, gone.text
    assert (await user.get("/v1/live/accounts")).json() == []
    missing = await user.get(f"/v1/live/accounts/{account_id}")
    assert missing.status_code == 404 and missing.json()["error"] == "live_account_not_found"
    assert await stored_secret(service, account_id) is None
    assert await exchange_position(exchange) == Decimal("0.1")  # nothing done at the exchange


async def test_a_rotated_key_is_the_one_mirroring_uses(
    service: FastAPI, exchange: Exchange
) -> None:
    user, source, account_id = await registered(
        service, exchange, sizing="fixed", sizing_value="1000"
    )
    await prices(service, exchange, "50000")
    await market(user, source, "BTCUSDT", "buy", "0.1")
    await settled(user, account_id, 1)
    assert await exchange_position(exchange) == Decimal("0.02")

    second = await exchange.user.portfolio(name="second sub-account")
    new_key, new_secret = await exchange.user.compat_key(second["id"])
    wrong = await user.post(
        f"/v1/live/accounts/{account_id}/rotate",
        json={"api_key": new_key, "api_secret": "not-the-secret"},
    )
    assert wrong.status_code == 400 and wrong.json()["error"] == "live_key_refused"
    kept = (await user.get(f"/v1/live/accounts/{account_id}")).json()
    assert kept["api_key_hint"] == "…" + exchange.api_key[-4:]  # a refused key changes nothing

    rotated = await user.post(
        f"/v1/live/accounts/{account_id}/rotate",
        json={"api_key": new_key, "api_secret": new_secret},
    )
    assert rotated.status_code == 200, rotated.text
    assert rotated.json()["api_key_hint"] == "…" + new_key[-4:]
    assert new_secret not in rotated.text
    stored = await stored_secret(service, account_id)
    assert stored is not None and service.state.ctx.cipher.decrypt(stored) == new_secret

    await market(user, source, "BTCUSDT", "buy", "0.1")
    rows = await settled(user, account_id, 2)
    assert rows[0]["status"] == "sent", rows[0]
    held = await positions(exchange.user, second["id"])
    assert Decimal(str(held["BTCUSDT"]["quantity"])) == Decimal("0.02")  # the new sub-account
    assert await exchange_position(exchange) == Decimal("0.02")  # the old one: untouched


async def test_the_max_position_notional_skips_an_order_that_would_pass_it(
    service: FastAPI, exchange: Exchange
) -> None:
    user, source, account_id = await registered(
        service, exchange, sizing="fixed", sizing_value="1000", max_position_notional="1500"
    )
    await prices(service, exchange, "50000")
    await market(user, source, "BTCUSDT", "buy", "0.1")  # 0.02 BTC = 1,000 USDT: within
    await settled(user, account_id, 1)
    await market(user, source, "BTCUSDT", "buy", "0.1")  # 2,000 USDT would pass 1,500
    rows = await settled(user, account_id, 2)
    assert rows[0]["status"] == "skipped", rows[0]
    assert "the position would pass 1500" in rows[0]["answer"]
    assert await exchange_position(exchange) == Decimal("0.02")

    # reducing is never held back
    await order(user, portfolio_id=source, symbol="BTCUSDT", action="close", quantity="0.1")
    rows = await settled(user, account_id, 3)
    assert rows[0]["status"] == "sent" and rows[0]["reduce_only"], rows[0]
    assert await exchange_position(exchange) == 0
    assert len(await live_orders(user, account_id)) == 3
