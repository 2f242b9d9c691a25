"""What an alert can say, in JSON or plain text, and what it does to the paper position (B1)."""

import time

import pytest
from fastapi import FastAPI

from tests.conftest import User
from tests.trading_api.helpers import set_price
from tests.webhooks.helpers import Hook


@pytest.fixture
async def hook(app: FastAPI, user: User) -> Hook:
    await set_price(app, "BTCUSDT", "50000")
    await set_price(app, "ETHUSDT", "2500")
    await set_price(app, "SOLUSDT", "100")
    return await Hook.create(app, user)


@pytest.mark.parametrize(
    ("body", "symbol", "quantity"),
    [
        ("buy BTCUSDT 0.01", "BTCUSDT", 0.01),
        ("BUY btcusdt 0.0109", "BTCUSDT", 0.01),  # rounded down to the 0.001 lot step
        ("long BINANCE:ETHUSDT.P 0.5", "ETHUSDT", 0.5),
        ("sell SOLUSDT 300usdt", "SOLUSDT", -3),
        ("sell SOLUSDT 250u x5", "SOLUSDT", -2),  # 2.5 SOL, floored to the 1 SOL step
        ("enter_short SOL/USDT 1", "SOLUSDT", -1),
        ("action=buy,symbol=ETH-USDT-SWAP,qty=0.2", "ETHUSDT", 0.2),
        ("buy XBTUSDT 0.002", "BTCUSDT", 0.002),
    ],
)
async def test_plain_text_market_orders(
    hook: Hook, body: str, symbol: str, quantity: float
) -> None:
    answer = await hook.ok(body)
    assert answer["status"] == "executed" and answer["orders"][0]["status"] == "filled"
    assert await hook.position(symbol) == pytest.approx(quantity)
    [signal] = await hook.signals()
    assert signal["body"] == body and signal["body_format"] == "text"
    assert signal["status"] == "executed" and signal["order_ids"] == [answer["orders"][0]["id"]]
    assert signal["parsed"][0]["symbol"] == symbol


async def test_json_with_tradingview_shapes(hook: Hook) -> None:
    answer = await hook.ok(
        {
            "secret": "ignored: the URL is the credential",
            "ticker": "BINANCE:BTCUSDT.P",
            "action": "buy",
            "contracts": "0.004",
            "orderType": "market",
            "price": "50012.3",
            "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "comment": "golden cross",
            "bot_uuid": "kept as an extra",
        }
    )
    assert answer["status"] == "executed"
    assert await hook.position("BTCUSDT") == pytest.approx(0.004)
    [signal] = await hook.signals()
    assert signal["body_format"] == "json"
    parsed = signal["parsed"][0]
    assert parsed["qty"] == "0.004" and parsed["comment"] == "golden cross"
    assert parsed["extras"] == {"bot_uuid": "kept as an extra"}


async def test_limit_order_with_at_price_rests_on_the_tick(hook: Hook) -> None:
    answer = await hook.ok("buy ETHUSDT 0.1 @2400.004")
    [placed] = answer["orders"]
    assert placed["type"] == "limit" and placed["status"] == "new"
    assert placed["price"] == 2400.0  # alert prices are put on the 0.01 tick


async def test_order_mode_flips_closes_and_ignores(hook: Hook) -> None:
    await hook.ok("buy SOLUSDT 2")
    # sell while long: one order closes the long and opens the short.
    flip = await hook.ok("sell SOLUSDT 1")
    assert flip["orders"][0]["quantity"] == 3.0
    assert await hook.position("SOLUSDT") == -1
    # close_long while short does nothing, and says so.
    ignored = await hook.ok("close_long SOLUSDT")
    assert ignored["status"] == "ignored" and "short" in ignored["msg"]
    assert await hook.position("SOLUSDT") == -1
    await hook.ok("add SOLUSDT 1")
    assert await hook.position("SOLUSDT") == -2
    await hook.ok("close_short SOLUSDT 50%")
    assert await hook.position("SOLUSDT") == -1
    await hook.ok("reverse SOLUSDT")
    assert await hook.position("SOLUSDT") == 1
    await hook.ok("close SOLUSDT")
    assert await hook.position("SOLUSDT") == 0


async def test_target_position_mode(hook: Hook) -> None:
    def target(position: str, size: str, key: str) -> dict[str, str]:
        return {
            "symbol": "ETHUSDT",
            "action": "buy" if position == "long" else "sell",
            "position": position,
            "position_size": size,
            "idempotency_key": key,
        }

    await hook.ok(target("long", "0.3", "a"))
    assert await hook.position("ETHUSDT") == pytest.approx(0.3)
    # A strategy reversal: TradingView sends the new target, not the order size.
    await hook.ok(target("short", "-0.2", "b"))
    assert await hook.position("ETHUSDT") == pytest.approx(-0.2)
    same = await hook.ok(target("short", "-0.2", "c"))
    assert same["status"] == "ignored"
    await hook.ok({**target("flat", "0", "d")})
    assert await hook.position("ETHUSDT") == 0


async def test_percent_of_equity_and_leverage(hook: Hook) -> None:
    # 10% of 10,000 USDT equity at 5x is 5,000 USDT of SOL at 100.
    await hook.ok("buy SOLUSDT 10% x5")
    assert await hook.position("SOLUSDT") == pytest.approx(50)
    positions = (await hook.user.get(f"/v1/portfolios/{hook.portfolio_id}/positions")).json()
    assert positions[0]["leverage"] == 5


async def test_several_commands_in_one_alert_are_all_or_nothing(hook: Hook) -> None:
    both = await hook.ok("buy BTCUSDT 0.01\nsell ETHUSDT 0.1")
    assert len(both["orders"]) == 2
    failed = await hook.refused("close BTCUSDT\nbuy ETHUSDT 999999", 422)
    assert failed["error"] in ("insufficient_margin", "qty_too_large", "max_position_exceeded")
    # The close on line 1 was rolled back with the failing line 2.
    assert await hook.position("BTCUSDT") == pytest.approx(0.01)


async def test_take_profit_orders_and_a_full_close_cancels_them(hook: Hook) -> None:
    answer = await hook.ok(
        {"action": "buy", "symbol": "BTCUSDT", "qty": 0.02, "tp": [51000, 52000]}
    )
    market, tp1, tp2 = answer["orders"]
    assert (market["status"], tp1["status"], tp2["status"]) == ("filled", "new", "new")
    assert (tp1["side"], tp1["action"], tp1["quantity"], tp1["price"]) == (
        "sell",
        "close",
        0.01,
        51000.0,
    )
    closed = await hook.ok("close BTCUSDT")
    assert "cancelled 2 open order(s)" in closed["msg"]
    open_orders = await hook.user.get(
        "/v1/order", params={"portfolio_id": hook.portfolio_id, "status": "open"}
    )
    assert open_orders.json()["orders"] == []


async def test_cancel_resting_orders(hook: Hook) -> None:
    await hook.ok("buy ETHUSDT 0.1 @2000")
    cancelled = await hook.ok("cancel ETHUSDT")
    assert cancelled["status"] == "executed" and "cancelled 1" in cancelled["msg"]
    nothing = await hook.ok("cancel_all ETHUSDT")
    assert nothing["status"] == "ignored"


async def test_a_flip_too_small_to_open_is_refused_not_half_done(hook: Hook) -> None:
    await hook.ok("sell BTCUSDT 0.004")
    # Closing the 0.004 short would work, but the 0.0001 long it asks for is below 0.001.
    found = await hook.refused("buy BTCUSDT 0.0001", 422)
    assert found["error"] == "qty_below_minimum" and "0.0001" in found["msg"]
    assert await hook.position("BTCUSDT") == pytest.approx(-0.004)


@pytest.mark.parametrize(
    "body",
    [
        "buy BTCUSDT ０.００２",  # full-width digits
        "buy ETHUSDT ٢",  # Arabic-Indic two
        "buy BTCUSDT 0.002 x１０",
        "buy BTCUSDT 0.002 @５００００",
        "action=buy,symbol=BTCUSDT,qty=０.００２",
        {"action": "buy", "symbol": "BTCUSDT", "qty": "０.００２"},
        {"action": "buy", "symbol": "BTCUSDT", "qty": "0.00_2"},
        {"action": "buy", "symbol": "BTCUSDT", "qty": "0.002", "leverage": "１０"},
        {"action": "buy", "symbol": "BTCUSDT", "qty": "0.002", "time": "１７００００００００"},
    ],
)
async def test_numbers_in_other_digits_are_refused_and_nothing_trades(
    hook: Hook, body: str | dict[str, str]
) -> None:
    refused = await hook.refused(body, 400)
    assert refused["error"] == "invalid_signal"
    assert await hook.position("BTCUSDT") == await hook.position("ETHUSDT") == 0
    [signal] = await hook.signals()
    assert signal["status"] == "invalid" and signal["order_ids"] == []
