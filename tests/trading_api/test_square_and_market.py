"""The public square and the market data endpoints (trading core points 1, 2, 9)."""

import itertools

import httpx
from fastapi import FastAPI

from tests.conftest import User
from tests.trading_api.helpers import market, order, set_price


async def test_square_lists_public_portfolios_with_stats(
    user: User, anon: httpx.AsyncClient, app: FastAPI
) -> None:
    await set_price(app, "BTCUSDT", "60000")
    public = await user.portfolio(visibility="public", name="winner")
    private = await user.portfolio(visibility="private", name="hidden")
    pid = public["id"]
    await market(user, pid, "BTCUSDT", "buy", "0.1")
    await set_price(app, "BTCUSDT", "62000")
    await order(
        user, portfolio_id=pid, symbol="BTCUSDT", action="close", type="market", quantity="0.1"
    )
    page = (await anon.get("/v1/portfolios/square", params={"sort": "return", "limit": 100})).json()
    codes = [item["code"] for item in page["items"]]
    assert public["code"] in codes and private["code"] not in codes
    mine = next(item for item in page["items"] if item["code"] == public["code"])
    assert mine["trades"] == 2 and mine["win_rate"] == 1
    assert mine["return_pct"] > 1.9 and mine["equity"] > 10190
    single = (await anon.get(f"/v1/portfolios/{public['code']}/public")).json()
    assert single["name"] == "winner" and single["equity"] == mine["equity"]
    assert (await anon.get(f"/v1/portfolios/{private['code']}/public")).status_code == 404
    bad_sort = await anon.get("/v1/portfolios/square", params={"sort": "nonsense"})
    assert bad_sort.status_code == 422


async def test_square_sorts_and_pages(anon: httpx.AsyncClient, user: User) -> None:
    for name in ("a", "b", "c"):
        await user.portfolio(visibility="public", name=name)
    first = (await anon.get("/v1/portfolios/square", params={"sort": "created", "limit": 2})).json()
    second = (
        await anon.get("/v1/portfolios/square", params={"sort": "created", "limit": 2, "offset": 2})
    ).json()
    assert len(first["items"]) == 2 and first["total"] == second["total"] >= 3
    created = [i["created_at"] for i in first["items"] + second["items"]]
    assert created == sorted(created, reverse=True)


async def test_symbols_catalogue(anon: httpx.AsyncClient) -> None:
    symbols = (await anon.get("/v1/market/symbols")).json()
    assert len(symbols) >= 20
    btc = next(s for s in symbols if s["symbol"] == "BTCUSDT")
    assert btc["tick_size"] == 0.1 and btc["step_size"] == 0.001 and btc["max_leverage"] == 125
    assert btc["brackets"][0]["maint_margin_ratio"] == 0.004


async def test_quotes_one_and_all(anon: httpx.AsyncClient, app: FastAPI) -> None:
    await set_price(app, "ETHUSDT", "3100")
    one = (await anon.get("/v1/market/quotes", params={"symbol": "ethusdt"})).json()
    assert len(one) == 1 and one[0]["mark_price"] == 3100
    assert set(one[0]) == {
        "symbol",
        "mark_price",
        "last_price",
        "index_price",
        "funding_rate",
        "next_funding_time",
        "time",
    }
    everything = (await anon.get("/v1/market/quotes")).json()
    assert len(everything) >= 20
    unknown = await anon.get("/v1/market/quotes", params={"symbol": "NOPE"})
    assert unknown.status_code == 400 and unknown.json()["error"] == "invalid_symbol"


async def test_klines_window_and_limit(anon: httpx.AsyncClient) -> None:
    rows = (
        await anon.get(
            "/v1/market/klines", params={"symbol": "BTCUSDT", "interval": "1h", "limit": 24}
        )
    ).json()
    assert len(rows) == 24
    assert all(b["open_time"] - a["open_time"] == 3_600_000 for a, b in itertools.pairwise(rows))
    assert all(
        r["low"] <= min(r["open"], r["close"]) <= max(r["open"], r["close"]) <= r["high"]
        for r in rows
    )
    start = rows[0]["open_time"]
    window = (
        await anon.get(
            "/v1/market/klines",
            params={
                "symbol": "BTCUSDT",
                "interval": "1h",
                "start": start,
                "end": start + 3 * 3_600_000,
            },
        )
    ).json()
    assert [r["open_time"] for r in window] == [start + i * 3_600_000 for i in range(4)]
    bad = await anon.get("/v1/market/klines", params={"symbol": "BTCUSDT", "interval": "7m"})
    assert bad.status_code == 400 and bad.json()["error"] == "invalid_interval"


async def test_status_says_the_feed_is_simulated(anon: httpx.AsyncClient) -> None:
    status = (await anon.get("/v1/market/status")).json()
    assert status["source"] == "sim" and status["simulated"] is True
    assert status["stale"] is False and status["symbols"] >= 20


async def test_a_public_page_shows_its_curve_and_open_positions_and_drawdown_follows_losses(
    user: User, anon: httpx.AsyncClient, app: FastAPI
) -> None:
    await set_price(app, "ETHUSDT", "3000")
    public = await user.portfolio(visibility="public", name="open book", initial_balance="1000")
    private = await user.portfolio(visibility="private")
    await market(user, public["id"], "ETHUSDT", "sell", "1")  # fee 1.5
    await set_price(app, "ETHUSDT", "3300")  # −300 on the short, before any equity mark
    [held] = (await anon.get(f"/v1/portfolios/{public['code']}/public/positions")).json()
    assert held["symbol"] == "ETHUSDT" and held["side"] == "short" and held["quantity"] == 1
    assert held["entry_price"] == 3000 and held["unrealized_pnl"] == -300
    assert held["roe_pct"] == -200  # 300 lost on 150 of margin at 20×
    assert "balance" not in held and "margin" not in held
    curve = (await anon.get(f"/v1/portfolios/{public['code']}/public/equity-curve")).json()
    assert curve[-1]["equity"] == 698.5
    card = (await anon.get(f"/v1/portfolios/{public['code']}/public")).json()
    # −30.15 % return, and the same fall from the starting balance as drawdown.
    assert card["return_pct"] == -30.15 and card["max_drawdown_pct"] == 30.15
    for path in ("public/positions", "public/equity-curve"):
        hidden = await anon.get(f"/v1/portfolios/{private['code']}/{path}")
        assert hidden.status_code == 404 and hidden.json()["error"] == "portfolio_not_found"
