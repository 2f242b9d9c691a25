"""Screenshots of the web application's main pages at desktop and phone width.

    make screenshots            # or: .venv/bin/python scripts/screenshots.py [--out DIR]

Starts the service in-process on a free 127.0.0.1 port (simulated market, a throw-away SQLite
database), fills it with a demo user through the /v1 API, then has headless Chromium (Debian's
/usr/bin/chromium, driven by Playwright) save one PNG per page and width into
artifacts/screenshots/ (git-ignored). Needs no network.
"""

import argparse
import asyncio
import os
import socket
import tempfile
import time
from decimal import Decimal
from pathlib import Path
from typing import Any

import uvicorn
from fastapi import FastAPI
from playwright.async_api import APIRequestContext, Page, ViewportSize, async_playwright

from papertrade.app import create_app
from papertrade.config import Settings
from papertrade.engine import snapshots
from papertrade.market.sim import SimFeed

CHROMIUM = os.environ.get("PAPERTRADE_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
WIDTHS: dict[str, ViewportSize] = {
    "desktop": {"width": 1366, "height": 900},
    "phone": {"width": 390, "height": 844},
}
EMAIL = "demo.trader@example.com"
PASSWORD = "demo-password"


class Client:
    """Calls /v1 as the web app does: session cookie, X-CSRF-Token and our own Origin."""

    def __init__(self, request: APIRequestContext, origin: str):
        self.request = request
        self.origin = origin

    async def __call__(self, method: str, path: str, body: Any = None) -> Any:
        state = await self.request.storage_state()
        csrf = next((c["value"] for c in state["cookies"] if c["name"] == "csrf_token"), "")
        response = await self.request.fetch(
            path, method=method, data=body, headers={"X-CSRF-Token": csrf, "Origin": self.origin}
        )
        if not response.ok:
            raise RuntimeError(f"{method} {path}: {response.status} {await response.text()}")
        return await response.json()


async def _seed(app: FastAPI, api: Client) -> dict[str, Any]:
    """A user with two portfolios, positions, a resting order, fills, keys and a webhook."""
    feed = app.state.ctx.market
    assert isinstance(feed, SimFeed)
    await api("POST", "/v1/auth/signup", {"email": EMAIL, "password": PASSWORD})
    main = await api(
        "POST",
        "/v1/portfolios",
        {
            "name": "BTC & ETH swing",
            "description": "Trend following on majors, 4h.",
            "visibility": "public",
        },
    )
    long_name = "Grid bot — a very long portfolio name to check that nothing breaks the layout"
    other = await api(
        "POST",
        "/v1/portfolios",
        {"name": long_name, "initial_balance": "12500000", "visibility": "public"},
    )
    pid = main["id"]
    # Start from the simulated prices of the moment, so the candle charts stay smooth.
    prices: dict[str, Decimal] = {}
    for symbol in ("BTCUSDT", "ETHUSDT", "SOLUSDT"):
        quote = feed.quote(symbol)
        assert quote is not None
        prices[symbol] = quote.mark_price
        await feed.set_price(symbol, quote.mark_price)
    await api("POST", f"/v1/portfolios/{pid}/leverage", {"symbol": "BTCUSDT", "leverage": 10})
    orders: list[dict[str, Any]] = [
        {"symbol": "BTCUSDT", "side": "buy", "type": "market", "quantity": "0.05"},
        {"symbol": "ETHUSDT", "side": "sell", "type": "market", "size_usd": "4000"},
        {"symbol": "SOLUSDT", "side": "buy", "type": "market", "size_usd": "1500"},
    ]
    for order in orders:
        await api("POST", "/v1/order", {"portfolio_id": pid, **order})
    big = {"symbol": "BTCUSDT", "side": "sell", "type": "market", "size_usd": "2500000"}
    await api("POST", "/v1/order", {"portfolio_id": other["id"], **big})
    # Let the prices wander so the equity curve has a shape: a mark at every step (the scheduled
    # job marks at most once a second).
    for step in range(12):
        drift = Decimal(1) + Decimal(step % 5 - 2) / 400 + Decimal(step) / 600
        for symbol, price in prices.items():
            await feed.set_price(symbol, price * drift)
        await asyncio.sleep(0.25)
        await snapshots.record_snapshots(app.state.ctx)
    close_sol = {"symbol": "SOLUSDT", "type": "market", "action": "close", "quantity": "5"}
    await api("POST", "/v1/order", {"portfolio_id": pid, **close_sol})
    below = (prices["BTCUSDT"] * Decimal("0.9")).quantize(Decimal(1))
    rest = {
        "symbol": "BTCUSDT",
        "side": "buy",
        "type": "limit",
        "quantity": "0.02",
        "price": str(below),
    }
    await api("POST", "/v1/order", {"portfolio_id": pid, **rest})
    btc = prices["BTCUSDT"]
    exits = {
        "take_profit": str((btc * Decimal("1.06")).quantize(Decimal(1))),
        "stop_loss": str((btc * Decimal("0.96")).quantize(Decimal(1))),
    }
    await api("POST", f"/v1/portfolios/{pid}/positions/BTCUSDT/tpsl", exits)
    await api("POST", f"/v1/portfolios/{pid}/api-keys", {"note": "freqtrade on my VPS"})
    hook = await api("POST", f"/v1/portfolios/{pid}/webhook-tokens")
    for alert in ("buy ETHUSDT.P 0.2", "sell DOGEUSDT {{strategy.order.contracts}}"):
        await api.request.post(hook["url"], data=alert, headers={"Content-Type": "text/plain"})
    await api("POST", "/v1/user/api-keys", {"note": "grid bot (production)", "scope": "write"})
    await api("POST", "/v1/user/api-keys", {"note": "dashboard (read only)", "scope": "read"})
    for amount in (250, 40):  # the wallet's recharge orders: one pending, one cancelled
        recharge = await api("POST", "/v1/recharge/orders", {"amount": amount})
    await api("POST", f"/v1/recharge/orders/{recharge['id']}/cancel")
    return {"id": pid, "code": main["code"], **await _seed_strategy(api, pid)}


STRATEGY_V1 = """# Trend with a momentum filter
symbol BTCUSDT
timeframe 15m
when ema(9) crosses above ema(21) and rsi(14) > 50 then buy 25%
when ema(9) crosses below ema(21) then close long
"""


async def _seed_strategy(api: Client, portfolio_id: int) -> dict[str, Any]:
    """A public DSL strategy with two versions, a finished backtest and a live deployment."""
    strategy = await api(
        "POST",
        "/v1/strategies",
        {"kind": "dsl", "name": "EMA trend", "source": STRATEGY_V1, "visibility": "public"},
    )
    sid = strategy["id"]
    v2 = STRATEGY_V1 + "when rsi(14) > 75 then close long\n"
    await api("POST", f"/v1/strategies/{sid}/versions", {"source": v2})
    end = int(time.time() * 1000) // 900_000 * 900_000
    run = await api(
        "POST", f"/v1/strategies/{sid}/backtests", {"start": end - 14 * 86_400_000, "end": end}
    )
    for _ in range(1200):  # a loaded machine: up to two minutes
        done = await api("GET", f"/v1/strategies/{sid}/backtests/{run['id']}")
        if done["status"] in ("done", "failed"):
            break
        await asyncio.sleep(0.1)
    await api("POST", f"/v1/strategies/{sid}/deployments", {"portfolio_id": portfolio_id})
    return {"strategy_id": sid, "strategy_code": strategy["code"], "backtest_id": run["id"]}


async def _serve(out: Path) -> list[Path]:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    origin = f"http://127.0.0.1:{sock.getsockname()[1]}"
    with tempfile.TemporaryDirectory(prefix="papertrade-shots-") as tmp:
        settings = Settings(
            var_dir=Path(tmp),
            secret_key="screenshots",
            public_base_url=origin,
            market_source="sim",
            sim_tick_ms=250,
            recharge_addresses=["TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE"],  # an example address
            recharge_poll_s=0,  # no TRON network here
        )
        app = create_app(settings)
        async with app.router.lifespan_context(app):
            server = uvicorn.Server(uvicorn.Config(app, lifespan="off", log_level="warning"))
            task = asyncio.create_task(server.serve(sockets=[sock]))
            while not server.started:
                if task.done():
                    task.result()  # the server failed to start: say why
                await asyncio.sleep(0.01)
            try:
                return await _shoot(app, origin, out)
            finally:
                server.should_exit = True
                await task


async def _shoot(app: FastAPI, origin: str, out: Path) -> list[Path]:
    saved: list[Path] = []
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        signed_in = await browser.new_context(base_url=origin, timezone_id="UTC")
        seeded = await _seed(app, Client(signed_in.request, origin))
        state = await signed_in.storage_state()
        await signed_in.close()
        pages = [
            ("home", "/", False),
            ("login", "/login", False),
            ("dashboard", "/app", True),
            ("portfolio", f"/app/portfolios/{seeded['id']}", True),
            ("settings-api-keys", "/app/settings/api-keys", True),
            ("wallet", "/app/wallet", True),
            ("markets", "/markets", False),
            ("market-btcusdt", "/markets/BTCUSDT", False),
            ("square", "/square", False),
            ("public-portfolio", f"/p/{seeded['code']}", False),
            ("strategies", "/app/strategies", True),
            ("strategy-editor", f"/app/strategies/{seeded['strategy_id']}", True),
            (
                "strategy-backtest",
                f"/app/strategies/{seeded['strategy_id']}#backtest-{seeded['backtest_id']}",
                True,
            ),
            ("strategy-live", f"/app/strategies/{seeded['strategy_id']}#live", True),
            ("public-strategy", f"/s/{seeded['strategy_code']}", False),
            ("help-strategies", "/help/strategies", False),
        ]
        for width_name, viewport in WIDTHS.items():
            for signed in (True, False):
                context = await browser.new_context(
                    base_url=origin,
                    viewport=viewport,
                    storage_state=state if signed else None,
                    timezone_id="UTC",
                    device_scale_factor=1,
                )
                page = await context.new_page()
                for name, path, needs_user in pages:
                    if needs_user != signed:
                        continue
                    await page.goto(path, wait_until="load")
                    await page.wait_for_timeout(1200)  # first poll results and chart paint
                    target = out / f"{name}-{width_name}.png"
                    await page.screenshot(path=str(target), full_page=True)
                    saved.append(target)
                if signed:
                    saved += await _trading_views(page, out, width_name, seeded["id"])
                await context.close()
        await browser.close()
    return saved


async def _trading_views(page: Page, out: Path, width: str, pid: int) -> list[Path]:
    """The ticket with a typed size (its preview) and, on a phone, the trade view."""
    await page.goto(f"/app/portfolios/{pid}", wait_until="load")
    if width == "phone":
        await page.locator(".phone-bar").get_by_role("button", name="Buy / Long").click()
    await page.select_option("#t-symbol", "BTCUSDT")
    await page.fill("#t-size", "2500")
    await page.wait_for_timeout(1200)  # the preview answers
    ticket = out / f"portfolio-ticket-preview-{width}.png"
    await page.locator(".ticket").screenshot(path=str(ticket))
    chart = out / f"portfolio-chart-{width}.png"
    if width == "phone":
        await page.locator(".phone-tabs").get_by_role("button", name="Chart").click()
        await page.wait_for_timeout(600)
    await page.locator(".chart-card").screenshot(path=str(chart))
    bots = out / f"portfolio-connect-a-bot-{width}.png"
    await page.locator("#keys-panel").screenshot(path=str(bots))
    return [ticket, chart, bots]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    default = Path(__file__).resolve().parents[1] / "artifacts" / "screenshots"
    parser.add_argument("--out", type=Path, default=default, help=f"folder (default {default})")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    saved = asyncio.run(_serve(args.out))
    for path in saved:
        print(path)  # noqa: T201
    print(f"{len(saved)} screenshots in {time.monotonic() - started:.1f} s")  # noqa: T201


if __name__ == "__main__":
    main()
