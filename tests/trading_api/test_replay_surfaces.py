"""A recorded day played through the service: quotes, klines and fills on /v1 and /fapi come from
the recording, never from ahead of the replay's clock (trading core point 1, `replay`)."""

from decimal import Decimal

from papertrade.config import Settings
from papertrade.market.replay import SAMPLE_PATH
from papertrade.market.replay_data import load_tapes
from papertrade.market.sample import SAMPLE_START_MS
from tests.conftest import client_for, running_app, sign_up
from tests.trading_api.helpers import market

MINUTE = 60_000


async def test_the_sample_day_is_what_every_surface_shows(isolated_settings: Settings) -> None:
    settings = isolated_settings.model_copy(update={"market_source": "replay", "replay_speed": 1.0})
    first = load_tapes(SAMPLE_PATH)["BTCUSDT"].candles[0]
    async with running_app(settings) as app:
        user = await sign_up(app)
        try:
            async with client_for(app) as client:
                status = (await client.get("/v1/market/status")).json()
                quote = (await client.get("/v1/market/quotes?symbol=BTCUSDT")).json()[0]
                premium = (await client.get("/fapi/v1/premiumIndex?symbol=BTCUSDT")).json()
                klines = (await client.get("/v1/market/klines?symbol=BTCUSDT&limit=5")).json()
                fapi_klines = (
                    await client.get("/fapi/v1/klines?symbol=BTCUSDT&interval=1m&limit=5")
                ).json()
            assert status["source"] == "replay"
            mark = Decimal(str(quote["mark_price"]))
            # The replay starts at the recording's first minute: the mark lies inside its candle.
            assert first.low <= mark <= first.high
            assert Decimal(premium["markPrice"]) == mark
            # No look-ahead: only the candle being played, on both surfaces alike.
            assert [k["open_time"] for k in klines] == [SAMPLE_START_MS]
            assert [row[0] for row in fapi_klines] == [SAMPLE_START_MS]
            assert Decimal(fapi_klines[0][1]) == first.open

            pid = (await user.portfolio(initial_balance="100000"))["id"]
            filled = await market(user, pid, "BTCUSDT", "buy", "0.01")
            assert filled["status"] == "filled"
            assert first.low <= Decimal(str(filled["avg_price"])) <= first.high
        finally:
            await user.client.aclose()
