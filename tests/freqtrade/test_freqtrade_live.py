"""freqtrade itself, in live mode (not dry-run), trading a portfolio through /fapi: Binance USD-M
futures with isolated margin and `stoploss_on_exchange`, only its URLs pointed at us. It runs
as its own process from its own virtualenv (`make setup` installs it in .venv-freqtrade; its
pinned ccxt is not ours). The test watches what a user would: the position freqtrade opened,
the stop it left on the exchange, and freqtrade's own record of how the trade ended."""

import asyncio
import json
import os
import sqlite3
from pathlib import Path
from typing import Any

from fastapi import FastAPI

from tests.conftest import User
from tests.fapi.clients import CCXT_URL_KEYS
from tests.trading_api.helpers import set_price

FREQTRADE = Path(__file__).resolve().parents[2] / ".venv-freqtrade" / "bin" / "freqtrade"
PAIR = "BTC/USDT:USDT"

STRATEGY = '''
from pandas import DataFrame
from freqtrade.strategy import IStrategy


class PapertradeProbe(IStrategy):
    """Enter long at once at 2x; a 2 % stop-loss kept on the exchange closes the trade."""

    INTERFACE_VERSION = 3
    timeframe = "1m"
    can_short = False
    stoploss = -0.02
    minimal_roi = {"0": 10}
    startup_candle_count = 1
    process_only_new_candles = False
    order_types = {
        "entry": "market",
        "exit": "market",
        "stoploss": "market",
        "stoploss_on_exchange": True,
        "stoploss_on_exchange_interval": 1,
    }

    def populate_indicators(self, dataframe: DataFrame, metadata: dict) -> DataFrame:
        return dataframe

    def populate_entry_trend(self, dataframe: DataFrame, metadata: dict) -> DataFrame:
        dataframe["enter_long"] = 1
        return dataframe

    def populate_exit_trend(self, dataframe: DataFrame, metadata: dict) -> DataFrame:
        dataframe["exit_long"] = 0
        return dataframe

    def leverage(self, pair, current_time, current_rate, proposed_leverage, max_leverage,
                 entry_tag, side, **kwargs):
        return 2.0
'''


def _config(base: str, key: str, secret: str, directory: Path) -> dict[str, Any]:
    urls = {name: f"{base}/fapi/{version}" for name, version in CCXT_URL_KEYS.items()}
    options = {"fetchCurrencies": False, "fetchMarkets": {"types": ["linear"]}}
    ccxt = {"urls": {"api": urls}, "options": options}  # as docs/fapi.md tells users
    return {
        "trading_mode": "futures",
        "margin_mode": "isolated",
        "dry_run": False,
        "max_open_trades": 1,
        "stake_currency": "USDT",
        "stake_amount": 200,
        "tradable_balance_ratio": 0.99,
        "timeframe": "1m",
        "exchange": {
            "name": "binance",
            "key": key,
            "secret": secret,
            "only_from_ccxt": True,
            "ccxt_config": ccxt,
            "ccxt_async_config": ccxt,
            "pair_whitelist": [PAIR],
        },
        "pairlists": [{"method": "StaticPairList"}],
        "entry_pricing": {"price_side": "other", "use_order_book": True, "order_book_top": 1},
        "exit_pricing": {"price_side": "other", "use_order_book": True, "order_book_top": 1},
        "unfilledtimeout": {"entry": 1, "exit": 1, "unit": "minutes"},
        "db_url": f"sqlite:///{directory / 'trades.sqlite'}",
        "user_data_dir": str(directory / "user_data"),
        "strategy": "PapertradeProbe",
        "strategy_path": str(directory),
        "initial_state": "running",
        "internals": {"process_throttle_secs": 1},
        "bot_name": "papertrade-probe",
    }


def _trades(database: Path) -> list[dict[str, Any]]:
    if not database.exists():
        return []
    with sqlite3.connect(database) as connection:
        connection.row_factory = sqlite3.Row
        try:
            rows = connection.execute("SELECT * FROM trades").fetchall()
        except sqlite3.OperationalError:  # freqtrade has not made its tables yet
            return []
    return [dict(row) for row in rows]


def _tail(log: Path) -> str:
    return log.read_text(errors="replace")[-4000:]


async def _until(
    check: Any, what: str, bot: asyncio.subprocess.Process, log: Path, within: float = 90
) -> Any:
    deadline = asyncio.get_running_loop().time() + within
    while True:
        value = await check()
        if value:
            return value
        if bot.returncode is not None or asyncio.get_running_loop().time() > deadline:
            tail = _tail(log)
            raise AssertionError(f"freqtrade: {what} did not happen; its log ends:\n{tail}")
        await asyncio.sleep(0.5)


async def test_freqtrade_live_isolated_with_its_stop_on_the_exchange(
    app: FastAPI, user: User, live_url: str, tmp_path: Path
) -> None:
    assert FREQTRADE.exists(), "freqtrade is installed by `make setup` (.venv-freqtrade)"
    await set_price(app, "BTCUSDT", "60000")
    portfolio = await user.portfolio(initial_balance="1000")
    pid = portfolio["id"]
    key, secret = await user.compat_key(pid)
    (tmp_path / "papertrade_probe.py").write_text(STRATEGY)
    (tmp_path / "user_data" / "data").mkdir(parents=True)
    config = tmp_path / "config.json"
    config.write_text(json.dumps(_config(live_url, key, secret, tmp_path)))
    log = tmp_path / "freqtrade.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PAPERTRADE_", "VIRTUAL"))}
    with log.open("wb") as out:
        bot = await asyncio.create_subprocess_exec(
            str(FREQTRADE), "trade", "--config", str(config), "--logfile", str(log),
            stdout=out, stderr=asyncio.subprocess.STDOUT, env=env, cwd=tmp_path,
        )  # fmt: skip
    try:

        async def position() -> dict[str, Any] | None:
            held = (await user.get(f"/v1/portfolios/{pid}/positions")).json()
            return held[0] if held else None

        async def stop() -> list[dict[str, Any]]:
            waiting = await user.get(
                "/v1/conditional-order", params={"portfolio_id": pid, "status": "open"}
            )
            return list(waiting.json()["conditional_orders"])

        held = await _until(position, "opening a position", bot, log)
        assert (held["symbol"], held["side"], held["margin_type"]) == (
            "BTCUSDT",
            "long",
            "isolated",
        )
        assert held["leverage"] == 2
        (loss_stop,) = await _until(stop, "placing its stop on the exchange", bot, log)
        assert (loss_stop["type"], loss_stop["side"]) == ("stop_market", "sell")
        assert 58_000 < loss_stop["trigger_price"] < 60_000  # 2 % under the entry, at 2×: ~1 %
        await set_price(app, "BTCUSDT", "55000")  # through the stop

        async def closed() -> list[dict[str, Any]]:
            return [t for t in _trades(tmp_path / "trades.sqlite") if not t["is_open"]]

        (trade,) = await _until(closed, "seeing its stop fill", bot, log)
        assert trade["exit_reason"] == "stoploss_on_exchange", trade
        assert await position() is None
    finally:
        if bot.returncode is None:
            bot.terminate()
            try:
                await asyncio.wait_for(bot.wait(), 30)
            except TimeoutError:
                bot.kill()
