"""Backtest candles come from the Binance feed's klines once and from the local cache after:
the service runs on a fake Binance on loopback that counts the klines it is asked for."""

from typing import Any

from papertrade.config import Settings
from papertrade.kit.time import now_ms
from tests.conftest import User, running_app, sign_up
from tests.fakes import FakeBinanceUpstream, binance_upstream
from tests.strategies.test_api import create, wait_backtest

__all__ = ["binance_upstream"]

DAY = 86_400_000
MINUTE = 60_000


def klines_asked(fake: FakeBinanceUpstream) -> list[dict[str, str]]:
    return [params for path, params in fake.requests if path == "/fapi/v1/klines"]


async def backtest(user: User, sid: int, start: int, end: int) -> dict[str, Any]:
    started = await user.post(f"/v1/strategies/{sid}/backtests", json={"start": start, "end": end})
    assert started.status_code == 202, started.text
    done = await wait_backtest(user, sid, started.json()["id"])
    assert done["status"] == "done", done["error"]
    return done


async def test_a_backtest_asks_binance_only_for_candles_not_cached(
    isolated_settings: Settings, binance_upstream: FakeBinanceUpstream
) -> None:
    settings = isolated_settings.model_copy(
        update={
            "market_source": "binance",
            "binance_rest_url": binance_upstream.rest_url,
            "binance_ws_url": binance_upstream.ws_url,
        }
    )
    end = now_ms() // DAY * DAY - DAY  # a day long past: every bar of it closed
    start = end - DAY  # 1,440 one-minute bars: one page of Binance klines
    async with running_app(settings) as app:
        user = await sign_up(app)
        sid = (await create(user))["id"]
        first = await backtest(user, sid, start, end)
        await user.client.aclose()
    fetched = klines_asked(binance_upstream)
    assert [(p["symbol"], p["interval"], int(p["startTime"])) for p in fetched] == [
        ("BTCUSDT", "1m", start)
    ]
    assert first["result"]["bars"] == 1440 and first["metrics"]["num_trades"] > 0

    # A restarted service (the feed's own short-lived memory gone) reads the day from its cache.
    binance_upstream.requests.clear()
    async with running_app(settings) as app:
        user = await sign_up(app)
        sid = (await create(user))["id"]
        again = await backtest(user, sid, start, end)
        assert klines_asked(binance_upstream) == []
        assert (again["result"], again["metrics"]) == (first["result"], first["metrics"])

        # Half a day more in front: one request, from the first bar not cached; the page it
        # answers overlaps the cached day, whose bars are kept as they were.
        longer = await backtest(user, sid, start - DAY // 2, end)
        await user.client.aclose()
    (asked,) = klines_asked(binance_upstream)
    assert int(asked["startTime"]) == start - DAY // 2
    assert longer["result"]["bars"] == 1440 + 720
    assert longer["result"]["equity_curve"][0][0] == start - DAY // 2
    assert longer["result"]["equity_curve"][-1][0] == end - MINUTE
