"""Signed account endpoints: account, balance, positions, leverage, modes, income, fees."""

from typing import Any

from papertrade.fapi import account_view, queries, translate
from papertrade.fapi.dispatch import Call, endpoint
from papertrade.fapi.errors import FapiError, invalid_data
from papertrade.fapi.params import Params
from papertrade.kit.time import now_ms
from papertrade.models import Portfolio
from papertrade.orders.pricing import Venue, instrument_of, require_feed
from papertrade.portfolios import service as portfolio_service
from papertrade.positions import service as position_service
from papertrade.trading.values import Instrument

ONE_WAY_ONLY = (
    "Papertrade runs one-way mode only (dualSidePosition=false); hedge mode is not supported."
)
CROSS_ONLY = "Papertrade runs cross margin only (marginType=CROSSED); ISOLATED is not supported."


async def _portfolio(call: Call, session: Any) -> Portfolio:
    return await portfolio_service.get_owned(session, call.principal, call.portfolio_id)


async def _snapshot(call: Call) -> account_view.Snapshot:
    async with call.ctx.db.reader() as session:
        portfolio = await _portfolio(call, session)
        return await account_view.snapshot(session, call.ctx, portfolio)


def _symbol_filter(call: Call) -> Instrument | None:
    symbol = call.params.symbol(required=False)
    return instrument_of(call.ctx.market, symbol) if symbol else None


@endpoint("GET", "/v3/account", signed=True, weight=5)
async def account_v3(call: Call) -> Any:
    return account_view.account_v3(await _snapshot(call))


@endpoint("GET", "/v2/account", signed=True, weight=5)
async def account_v2(call: Call) -> Any:
    return account_view.account_v2(await _snapshot(call))


@endpoint("GET", "/v2/balance", "/v3/balance", signed=True, weight=5)
async def balance(call: Call) -> Any:
    return account_view.balances(await _snapshot(call))


@endpoint("GET", "/v3/positionRisk", signed=True, weight=5)
async def position_risk_v3(call: Call) -> Any:
    only = _symbol_filter(call)
    snap = await _snapshot(call)
    symbols = snap.active_symbols()
    return [
        account_view.position_risk_v3(snap, s) for s in symbols if only is None or s == only.symbol
    ]


@endpoint("GET", "/v2/positionRisk", signed=True, weight=5)
async def position_risk_v2(call: Call) -> Any:
    only = _symbol_filter(call)
    snap = await _snapshot(call)
    symbols = [only.symbol] if only else sorted(snap.instruments)
    return [account_view.position_risk_v2(snap, s) for s in symbols]


@endpoint("POST", "/v1/leverage", signed=True)
async def change_leverage(call: Call) -> Any:
    symbol = call.params.symbol()
    leverage = call.params.integer("leverage", required=True, low=-(2**31), high=2**31)
    assert symbol is not None
    assert leverage is not None
    if leverage < 1:
        raise FapiError(400, -4028, f"Leverage {leverage} is not valid.")
    async with call.ctx.transaction() as uow:
        instrument, max_notional = await position_service.set_leverage(
            uow.session, Venue.of(call.ctx), call.principal, call.portfolio_id, symbol, leverage
        )
    return {
        "leverage": leverage,
        "maxNotionalValue": translate.dec(max_notional),
        "symbol": instrument.symbol,
    }


@endpoint("GET", "/v1/leverageBracket", signed=True)
async def leverage_bracket(call: Call) -> Any:
    only = _symbol_filter(call)
    if only is not None:
        return translate.bracket_wire(only.symbol, only.brackets)
    instruments = require_feed(call.ctx.market).instruments()
    return [translate.bracket_wire(s, instruments[s].brackets) for s in sorted(instruments)]


@endpoint("GET", "/v1/positionSide/dual", signed=True, weight=30)
async def position_mode(call: Call) -> Any:
    return {"dualSidePosition": False}


@endpoint("POST", "/v1/positionSide/dual", signed=True)
async def change_position_mode(call: Call) -> Any:
    dual = call.params.values.get("dualSidePosition", "")
    if dual == "":
        raise FapiError(
            400,
            -1102,
            "Mandatory parameter 'dualSidePosition' was not sent, was empty/null, or malformed.",
        )
    if call.params.boolean("dualSidePosition"):
        raise invalid_data("dualSidePosition", ONE_WAY_ONLY)
    raise FapiError(400, -4059, "No need to change position side.")


@endpoint("GET", "/v1/multiAssetsMargin", signed=True, weight=30)
async def multi_assets_mode(call: Call) -> Any:
    return {"multiAssetsMargin": False}


@endpoint("POST", "/v1/multiAssetsMargin", signed=True)
async def change_multi_assets_mode(call: Call) -> Any:
    if call.params.values.get("multiAssetsMargin", "") == "":
        raise FapiError(
            400,
            -1102,
            "Mandatory parameter 'multiAssetsMargin' was not sent, was empty/null, or malformed.",
        )
    if call.params.boolean("multiAssetsMargin"):
        raise invalid_data(
            "multiAssetsMargin", "Papertrade margins in USDT only; Multi-Assets mode is off."
        )
    raise FapiError(
        400,
        -4171,
        "Adjusted asset mode is currently set and does not need to be adjusted repeatedly.",
    )


@endpoint("POST", "/v1/marginType", signed=True)
async def change_margin_type(call: Call) -> Any:
    symbol = call.params.symbol()
    assert symbol is not None
    instrument_of(call.ctx.market, symbol)
    margin_type = call.params.choice(
        "marginType",
        {"ISOLATED", "CROSSED", "CROSS"},
        required=True,
        error=invalid_data("marginType", "Use ISOLATED or CROSSED."),
    )
    if margin_type == "ISOLATED":
        raise invalid_data("marginType", CROSS_ONLY)
    # Every symbol is always cross: exactly Binance's answer when nothing changes.
    raise FapiError(400, -4046, "No need to change margin type.")


@endpoint("GET", "/v1/symbolConfig", signed=True, weight=5)
async def symbol_config(call: Call) -> Any:
    only = _symbol_filter(call)
    snap = await _snapshot(call)
    symbols = [only.symbol] if only else sorted(snap.instruments)
    return [
        {
            "symbol": s,
            "marginType": "CROSSED",
            "isAutoAddMargin": "false",
            "leverage": snap.leverage(s),
            "maxNotionalValue": snap.max_notional(s),
        }
        for s in symbols
    ]


@endpoint("GET", "/v1/accountConfig", signed=True, weight=5)
async def account_config(call: Call) -> Any:
    return {
        "feeTier": 0,
        "canTrade": True,
        "canDeposit": False,
        "canWithdraw": False,
        "dualSidePosition": False,
        "updateTime": now_ms(),
        "multiAssetsMargin": False,
        "tradeGroupId": -1,
    }


@endpoint("GET", "/v1/commissionRate", signed=True, weight=20)
async def commission_rate(call: Call) -> Any:
    symbol = call.params.symbol()
    assert symbol is not None
    instrument = instrument_of(call.ctx.market, symbol)
    async with call.ctx.db.reader() as session:
        portfolio = await _portfolio(call, session)
    return {
        "symbol": instrument.symbol,
        "makerCommissionRate": translate.dec(portfolio.maker_fee_rate, 6),
        "takerCommissionRate": translate.dec(portfolio.taker_fee_rate, 6),
    }


def _income_kinds(params: Params) -> list[str] | None:
    income_type = params.text("incomeType", max_len=40)
    if income_type is None:
        return None
    wanted = income_type.upper()
    if not wanted.replace("_", "").isalpha():
        raise invalid_data("incomeType")
    return [kind for kind, name in translate.INCOME_TYPES.items() if name == wanted]


@endpoint("GET", "/v1/income", signed=True, weight=30)
async def income(call: Call) -> Any:
    params = call.params
    only = _symbol_filter(call)
    kinds = _income_kinds(params)
    start = params.integer("startTime", low=0)
    end = params.integer("endTime", low=0)
    page = params.integer("page", low=1, high=10_000) or 1
    limit = params.limit(100, 1000)
    if kinds == []:
        return []
    async with call.ctx.db.reader() as session:
        await _portfolio(call, session)
        rows = await queries.ledger_window(
            session,
            call.portfolio_id,
            symbol=only.symbol if only else None,
            kinds=kinds,
            start_ms=start,
            end_ms=end,
            offset=(page - 1) * limit,
            limit=limit,
        )
    return [translate.income_wire(r) for r in rows]
