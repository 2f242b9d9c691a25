"""Issue 30 part 2, through the API: a deposit is not a return. A 95,000 top-up after a small
trade shows the trade's return (not +1899 %) on the equity read, the Square and the public page;
a 20 USDT transfer out is not a loss; over random sequences of top-ups, transfers and equity
marks every return and drawdown stays 0, and with trades the return is the product of the
sub-period returns (docs/trading.md, "Returns")."""

import random
from decimal import Decimal
from typing import Any

import httpx
from fastapi import FastAPI

from papertrade.engine.snapshots import record_snapshots
from papertrade.ledger.service import post
from papertrade.models import Portfolio
from papertrade.trading.enums import LedgerKind
from papertrade.wallet import service as wallets
from tests.conftest import User
from tests.trading_api.helpers import equity, market, order, set_price

D = Decimal
PCT = D("0.0001")


def pct(value: Any) -> Decimal:
    return D(str(value)).quantize(PCT)


async def figures(user: User, anon: httpx.AsyncClient, pf: dict[str, Any]) -> list[Decimal]:
    """The return and drawdown of every surface: the equity read, the public page, the Square,
    the leader statistics' drawdown and the last point of both equity curves."""
    mine = await equity(user, pf["id"])
    public = (await anon.get(f"/v1/portfolios/{pf['code']}/public")).json()
    square = (await anon.get("/v1/portfolios/square", params={"limit": 100})).json()
    listed = [i for i in square["items"] if i["code"] == pf["code"]]
    leader = (await anon.get(f"/v1/copy/leaders/{pf['id']}")).json()
    curve = (await anon.get(f"/v1/portfolios/{pf['code']}/public/equity-curve")).json()
    own_curve = (await user.get(f"/v1/portfolios/{pf['id']}/equity-curve")).json()
    values = [mine["return_pct"], public["return_pct"], curve[-1]["return_pct"]]
    values += [mine["max_drawdown_pct"], public["max_drawdown_pct"], leader["max_drawdown_pct"]]
    values += [p["return_pct"] for p in own_curve]
    if listed:  # the Square pages 100 portfolios sorted by return; this one may be further on
        values += [listed[0]["return_pct"], listed[0]["max_drawdown_pct"]]
    return [pct(v) for v in values]


async def transfer_out(app: FastAPI, portfolio_id: int, amount: D) -> None:
    """A transfer out of the portfolio as older ledgers hold them (the API now refuses that
    direction: portfolio money is paper), booked through the ledger's one function."""
    async with app.state.ctx.transaction() as uow:
        portfolio = await uow.session.get(Portfolio, portfolio_id)
        assert portfolio is not None
        post(uow, portfolio, LedgerKind.WALLET_TRANSFER, -amount, note="to the wallet")


async def transfer_in(app: FastAPI, user: User, portfolio_id: int, amount: D) -> None:
    """Money from the wallet (credited by an operator) moved in through the API."""
    async with app.state.ctx.transaction() as uow:
        await wallets.credit(uow, user.id, LedgerKind.OPERATOR_CREDIT, amount, actor="test")
    body = {"direction": "to_portfolio", "portfolio_id": portfolio_id, "amount": str(amount)}
    response = await user.post("/v1/user/wallet/transfers", json=body)
    assert response.status_code == 200, response.text


async def round_trip(user: User, app: FastAPI, pid: int, buy_at: str, sell_at: str) -> None:
    await set_price(app, "BTCUSDT", buy_at)
    await market(user, pid, "BTCUSDT", "buy", "0.01")
    await set_price(app, "BTCUSDT", sell_at)
    await order(
        user, portfolio_id=pid, symbol="BTCUSDT", action="close", type="market", quantity="0.01"
    )


async def test_a_95000_top_up_after_a_small_trade_shows_the_trade_s_return(
    user: User, anon: httpx.AsyncClient, app: FastAPI
) -> None:
    pf = await user.portfolio(visibility="public", name="topped up", initial_balance="5000")
    await round_trip(user, app, pf["id"], "60000", "60100")  # +1, less two fees of about 0.3
    traded = await equity(user, pf["id"])
    trade_return = (D(str(traded["equity"])) / 5000 - 1) * 100
    assert 0 < trade_return < D("0.01")
    response = await user.post(f"/v1/portfolios/{pf['id']}/top-up", json={"amount": "95000"})
    assert response.status_code == 200, response.text
    public = (await anon.get(f"/v1/portfolios/{pf['code']}/public")).json()
    square = (await anon.get("/v1/portfolios/square", params={"limit": 100})).json()
    listed = next(i for i in square["items"] if i["code"] == pf["code"])
    assert pct(public["return_pct"]) == pct(listed["return_pct"]) == pct(trade_return)
    after = await equity(user, pf["id"])
    assert D(str(after["equity"])) > 100_000  # the money is there; it is not a return
    for shown in (after, public, listed):
        assert pct(shown["return_pct"]) == pct(trade_return)  # not +1899.98 %
        assert shown["max_drawdown_pct"] == 0
    assert after["period_start"] == public["period_start"] == pf["created_at"]


async def test_a_20_usdt_transfer_out_is_not_a_loss(
    user: User, anon: httpx.AsyncClient, app: FastAPI
) -> None:
    pf = await user.portfolio(visibility="public", name="paid out", initial_balance="9000")
    await round_trip(user, app, pf["id"], "60000", "59990")  # −0.1 and the fees: a small loss
    await record_snapshots(app.state.ctx)
    card = (await anon.get(f"/v1/portfolios/{pf['code']}/public")).json()
    await transfer_out(app, pf["id"], D(20))
    await record_snapshots(app.state.ctx)
    moved = (await anon.get(f"/v1/portfolios/{pf['code']}/public")).json()
    assert moved["equity"] == card["equity"] - 20
    assert (moved["return_pct"], moved["max_drawdown_pct"]) == (
        card["return_pct"],
        card["max_drawdown_pct"],
    )
    await transfer_out(app, pf["id"], D(20))
    before = await figures(user, anon, pf)
    trade_return = before[0]
    assert -D("0.02") < trade_return < 0
    await transfer_out(app, pf["id"], D(20))
    await record_snapshots(app.state.ctx)
    after = await figures(user, anon, pf)
    assert after[:6] == before[:6]  # return and drawdown of every surface, unchanged
    assert after[-2:] == before[-2:]  # the Square's
    assert after[:3] == [trade_return] * 3
    assert after[3:6] == [-trade_return] * 3  # the drawdown is the trade's loss, not −0.23 %


async def test_a_reset_starts_a_new_period(
    user: User, anon: httpx.AsyncClient, app: FastAPI
) -> None:
    pf = await user.portfolio(visibility="public", name="reset", initial_balance="9000")
    await round_trip(user, app, pf["id"], "60000", "59000")  # −10 and fees: a loss
    assert pct((await equity(user, pf["id"]))["return_pct"]) < 0
    response = await user.post(f"/v1/portfolios/{pf['id']}/reset")
    assert response.status_code == 200, response.text
    now = await equity(user, pf["id"])
    assert now["return_pct"] == 0 and now["max_drawdown_pct"] == 0
    assert now["period_start"] > pf["created_at"]
    curve = (await user.get(f"/v1/portfolios/{pf['id']}/equity-curve")).json()
    old = [p for p in curve if p["period_start"] == pf["created_at"]]
    assert old and old[-1]["return_pct"] < 0  # the old period stays readable


async def test_random_flows_leave_every_figure_at_zero_and_trades_chain_sub_periods(
    user: User, anon: httpx.AsyncClient, app: FastAPI
) -> None:
    """Seeded random sequences (an HTTP round trip each, so a few dozen steps, not hypothesis's
    hundreds: tests/trading/test_returns.py has those on the pure function)."""
    for seed in range(3):
        rng = random.Random(seed)
        pf = await user.portfolio(visibility="public", name=f"flows {seed}", initial_balance="2000")
        for _ in range(8):
            step = rng.choice(["top_up", "in", "out", "mark"])
            amount = D(rng.randint(1, 500_000_000)) / 10_000
            if step == "top_up":
                path = f"/v1/portfolios/{pf['id']}/top-up"
                assert (await user.post(path, json={"amount": str(amount)})).status_code == 200
            elif step == "in":
                await transfer_in(app, user, pf["id"], amount)
            elif step == "out":
                balance = D(str((await equity(user, pf["id"]))["balance"]))
                await transfer_out(app, pf["id"], min(amount, balance - 1))
            else:
                await record_snapshots(app.state.ctx)
        assert set(await figures(user, anon, pf)) == {D(0)}

    # With trades: each sub-period's growth is the equity just before the next flow over the
    # equity just after the previous one, read from the API around each top-up.
    pf = await user.portfolio(visibility="public", name="traded", initial_balance="3000")
    growth, base = D(1), D(3000)
    prices = ["60000", "60300", "59700", "60600", "60000"]
    for seed in range(4):
        rng = random.Random(seed)
        await round_trip(user, app, pf["id"], rng.choice(prices), rng.choice(prices))
        await record_snapshots(app.state.ctx)
        before = D(str((await equity(user, pf["id"]))["equity"]))
        growth *= before / base
        top_up = {"amount": str(rng.randint(1, 100_000))}
        assert (await user.post(f"/v1/portfolios/{pf['id']}/top-up", json=top_up)).status_code
        base = D(str((await equity(user, pf["id"]))["equity"]))
    await round_trip(user, app, pf["id"], "60000", "60450")
    end = D(str((await equity(user, pf["id"]))["equity"]))
    expected = pct((growth * end / base - 1) * 100)
    shown = await figures(user, anon, pf)
    assert shown[0] == shown[1] == shown[2] == expected


async def test_a_wallet_transfer_with_a_position_open_ends_its_sub_period_exactly(
    user: User, app: FastAPI
) -> None:
    """Money from the wallet while a position is up: the sub-period before it ends at the equity
    of that moment (marked as the transfer is booked), not at the last periodic mark's."""
    pf = await user.portfolio(name="funded", initial_balance="10000")
    await set_price(app, "BTCUSDT", "60000")
    await market(user, pf["id"], "BTCUSDT", "buy", "0.1")
    await set_price(app, "BTCUSDT", "61000")  # +100 unrealized, no mark since
    before = D(str((await equity(user, pf["id"]))["equity"]))
    await transfer_in(app, user, pf["id"], D(10_000))
    await set_price(app, "BTCUSDT", "60000")  # the gain is gone again, on twice the money
    now = await equity(user, pf["id"])
    expected = ((before / 10_000) * (D(str(now["equity"])) / (before + 10_000)) - 1) * 100
    assert expected > D("0.4")  # +1 % on 10,000, then −100 on 20,100
    assert abs(pct(now["return_pct"]) - pct(expected)) <= D("0.0002"), (now, expected)
