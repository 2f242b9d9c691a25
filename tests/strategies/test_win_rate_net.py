"""Win rates count a trade that gained less than its fees as a loss (issue 33 point 7): the
backtest's metrics on each trade's net PnL, the square's on each close net of its fee."""

from decimal import Decimal

import httpx
import numpy as np
from fastapi import FastAPI

from papertrade.strategies.backtest import metrics
from papertrade.strategies.backtest.simulate import Costs, simulate
from papertrade.strategies.bars import Bars
from papertrade.strategies.dsl.parse import parse
from papertrade.trading.fees import FeeSchedule
from tests.conftest import User
from tests.trading_api.helpers import market, order, set_price

MINUTE = 60_000


def bars(opens: list[float], closes: list[float]) -> Bars:
    o, c = np.array(opens, dtype=float), np.array(closes, dtype=float)
    return Bars(
        time=np.arange(len(o), dtype=np.int64) * MINUTE,
        open=o,
        high=np.maximum(o, c),
        low=np.minimum(o, c),
        close=c,
        volume=np.ones(len(o)),
    )


def test_a_backtest_trade_up_before_fees_and_down_after_them_is_no_win() -> None:
    # bought 2 at 110.00, sold at 110.05: +0.10 before fees, 0.11 + 0.11005 of taker fees
    data = bars([100, 100, 110, 110.05, 110.05], [100, 105, 110, 125, 125])
    program = parse("when close > 104 and close < 106 then buy 2 qty\nwhen close > 124 then close")
    outcome = simulate(program, data, Costs(Decimal(10_000), FeeSchedule()))
    (trade,) = outcome.trades
    gross = sum((-f.qty * f.price for f in trade.fills), Decimal(0))
    assert gross == Decimal("0.1") and trade.pnl < 0
    found = metrics.compute(outcome, data, Decimal(10_000))
    assert found["num_trades"] == 1
    assert found["win_rate_pct"] == 0.0
    assert found["profit_factor"] == 0.0  # no net winner
    assert found["expectancy"] == float(trade.pnl)


def test_a_backtest_win_rate_counts_net_winners_only() -> None:
    # two trades: one clear winner, one that gains less than its fees
    data = bars(
        [100, 100, 110, 130, 130, 100, 110, 110.05, 110.05],
        [100, 105, 115, 125, 100, 105, 110, 125, 125],
    )
    program = parse("when close > 104 and close < 106 then buy 2 qty\nwhen close > 124 then close")
    outcome = simulate(program, data, Costs(Decimal(10_000), FeeSchedule()))
    winner, loser = outcome.trades
    assert winner.pnl > 0 and loser.pnl < 0
    found = metrics.compute(outcome, data, Decimal(10_000))
    assert found["win_rate_pct"] == 50.0


async def test_the_square_counts_a_close_that_gained_less_than_its_fee_as_no_win(
    user: User, anon: httpx.AsyncClient, app: FastAPI
) -> None:
    await set_price(app, "BTCUSDT", "60000")
    public = await user.portfolio(visibility="public", name="fee-eaten")
    pid = public["id"]
    await market(user, pid, "BTCUSDT", "buy", "0.1")
    # +0.1 × 1 = 0.1 USDT realized on the close, its taker fee about 3 USDT
    await set_price(app, "BTCUSDT", "60001")
    await order(
        user, portfolio_id=pid, symbol="BTCUSDT", action="close", type="market", quantity="0.1"
    )
    fills = (await user.get(f"/v1/portfolios/{pid}/fills")).json()
    close = next(f for f in fills if Decimal(f["realized_pnl"]) != 0)
    assert 0 < Decimal(close["realized_pnl"]) < Decimal(close["commission"]), close
    found = (await anon.get(f"/v1/portfolios/{public['code']}/public")).json()
    assert found["trades"] == 2 and found["win_rate"] == 0, found
