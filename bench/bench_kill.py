"""The kill switch: from the call to every open order cancelled on the exchange, for 10 live
accounts (target under 1 s). "The exchange" is a second Papertrade served on 127.0.0.1 (its
/fapi is Binance-compatible), each sub-account holding resting LIMIT orders on two symbols; the
call goes through the real /v1/live/kill endpoint and the real ccxt client.
"""

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.conftest import make_settings, running_app, sign_up
from tests.liveserver import live_server
from tests.trading_api.helpers import limit, order, set_price

ACCOUNTS = 10
ORDERS_PER_SYMBOL = 3
ROUNDS = 5


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        exchange_settings = make_settings(f"sqlite+aiosqlite:///{root}/exchange.db", root / "x")
        async with running_app(exchange_settings) as exchange, live_server(exchange) as url:
            service_settings = make_settings(
                f"sqlite+aiosqlite:///{root}/service.db", root / "s", live_exchange_url=url
            )
            async with running_app(service_settings) as service:
                await set_price(exchange, "BTCUSDT", "50000")
                await set_price(exchange, "ETHUSDT", "3000")
                owners = [await sign_up(exchange) for _ in range(ACCOUNTS)]
                subs = [await o.portfolio(name="sub") for o in owners]
                keys = [await o.compat_key(p["id"]) for o, p in zip(owners, subs, strict=True)]
                user = await sign_up(service)
                for key, secret in keys:
                    answer = await user.post(
                        "/v1/live/accounts",
                        json={"label": "sub", "api_key": key, "api_secret": secret},
                    )
                    assert answer.status_code == 201, answer.text
                timings = []
                for _ in range(ROUNDS):
                    for owner, sub in zip(owners, subs, strict=True):
                        for _ in range(ORDERS_PER_SYMBOL):
                            await limit(owner, sub["id"], "buy", "0.01", "40000")
                            await order(
                                owner,
                                portfolio_id=sub["id"],
                                symbol="ETHUSDT",
                                side="buy",
                                type="limit",
                                quantity="0.1",
                                price="2000",
                            )
                    start = time.perf_counter()
                    answer = await user.post("/v1/live/kill", json={"close_positions": False})
                    timings.append(time.perf_counter() - start)
                    reports = answer.json()
                    assert answer.status_code == 200, answer.text
                    assert len(reports) == ACCOUNTS, reports
                    assert all(r["error"] is None for r in reports), reports
                    for owner, sub in zip(owners, subs, strict=True):
                        left = await owner.get(
                            "/v1/order", params={"portfolio_id": sub["id"], "status": "open"}
                        )
                        assert left.json()["orders"] == [], "an order survived the kill switch"
                await asyncio.gather(*(o.client.aclose() for o in [*owners, user]))
    opened = ACCOUNTS * 2 * ORDERS_PER_SYMBOL
    print(f"{ACCOUNTS} accounts, {opened} open orders on 2 symbols, {ROUNDS} rounds\n")
    print("| median | best | worst | target |")
    print("|---:|---:|---:|---|")
    print(
        f"| {statistics.median(timings) * 1000:.0f} ms | {min(timings) * 1000:.0f} ms "
        f"| {max(timings) * 1000:.0f} ms | < 1000 ms |"
    )


if __name__ == "__main__":
    asyncio.run(main())
