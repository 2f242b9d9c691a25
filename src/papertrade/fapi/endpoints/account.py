"""Signed account endpoints: account, balance, positions, leverage, modes, income, fees."""

from decimal import Decimal
from typing import Any

from papertrade.fapi import account_view, queries, translate
from papertrade.fapi.dispatch import Call, endpoint
from papertrade.fapi.errors import FapiError, invalid_data
from papertrade.fapi.order_checks import check_precision
from papertrade.fapi.params import Params
from papertrade.kit.time import now_ms
from papertrade.models import Portfolio
from papertrade.orders.pricing import Venue, instrument_of, require_feed
from papertrade.portfolios import service as portfolio_service
from papertrade.positions import service as position_service
from papertrade.trading.enums import MarginType
from papertrade.trading.values import Instrument

MARGIN_TYPES = {
    "ISOLATED": MarginType.ISOLATED,
    "CROSSED": MarginType.CROSS,
    "CROSS": MarginType.CROSS,
}
POSITION_SIDES = {"BOTH", "LONG", "SHORT"}
MAX_MARGIN_AMOUNT = Decimal(10) ** 15


async def _portfolio(call: Call, session: Any) -> Portfolio:
    return await portfolio_service.get_owned(session, call.principal, call.portfolio_id)


async def _snapshot(call: Call) -> account_view.Snapshot:
    return await account_view.read_snapshot(call.ctx, call.principal, call.portfolio_id)


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
    symbols = [s for s in snap.active_symbols() if only is None or s == only.symbol]
    return [
        account_view.position_risk_v3(snap, s, side)
        for s, side in account_view.rows_of(snap, symbols)
    ]


@endpoint("GET", "/v2/positionRisk", signed=True, weight=5)
async def position_risk_v2(call: Call) -> Any:
    only = _symbol_filter(call)
    snap = await _snapshot(call)
    symbols = [only.symbol] if only else sorted(snap.instruments)
    return [
        account_view.position_risk_v2(snap, s, side)
        for s, side in account_view.rows_of(snap, symbols)
    ]


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
    streams = getattr(call.request.app.state, "binance_streams", None)
    if streams is not None:  # ACCOUNT_CONFIG_UPDATE on the user data stream (fapi/stream)
        await streams.account_config(call.portfolio_id, instrument.symbol, leverage)
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
    async with call.ctx.db.reader() as session:
        portfolio = await _portfolio(call, session)
    return {"dualSidePosition": portfolio.dual_side_position}


@endpoint("POST", "/v1/positionSide/dual", signed=True)
async def change_position_mode(call: Call) -> Any:
    if call.params.values.get("dualSidePosition", "") == "":
        raise FapiError(
            400,
            -1102,
            "Mandatory parameter 'dualSidePosition' was not sent, was empty/null, or malformed.",
        )
    dual = call.params.boolean("dualSidePosition")
    async with call.ctx.transaction() as uow:
        await position_service.set_position_mode(uow, call.principal, call.portfolio_id, dual)
    return {"code": 200, "msg": "success"}


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
    chosen = call.params.choice(
        "marginType",
        set(MARGIN_TYPES),
        required=True,
        error=invalid_data("marginType", "Use ISOLATED or CROSSED."),
    )
    assert chosen is not None
    async with call.ctx.transaction() as uow:
        await position_service.set_margin_type(
            uow, Venue.of(call.ctx), call.principal, call.portfolio_id, symbol, MARGIN_TYPES[chosen]
        )
    return {"code": 200, "msg": "success"}


@endpoint("POST", "/v1/positionMargin", signed=True)
async def change_position_margin(call: Call) -> Any:
    params = call.params
    symbol = params.symbol()
    assert symbol is not None
    amount = params.decimal("amount", required=True)
    kind = params.integer("type", required=True, low=1, high=2)
    position_side = params.choice(
        "positionSide", POSITION_SIDES, error=FapiError(400, -4060, "Invalid position side.")
    )
    assert amount is not None
    assert kind is not None
    if amount <= 0 or amount > MAX_MARGIN_AMOUNT:
        raise invalid_data("amount", "It must be a positive USDT amount.")
    check_precision(amount, 6)
    async with call.ctx.transaction() as uow:
        position = await position_service.adjust_isolated_margin(
            uow,
            Venue.of(call.ctx),
            call.principal,
            call.portfolio_id,
            symbol,
            position_side,
            amount,
            kind,
        )
    return {
        "amount": float(amount),
        "code": 200,
        "msg": "Successfully modify position margin.",
        "type": kind,
        "symbol": position.symbol,
    }


@endpoint("GET", "/v1/positionMargin/history", signed=True, weight=1)
async def position_margin_history(call: Call) -> Any:
    params = call.params
    symbol = params.symbol()
    assert symbol is not None
    instrument = instrument_of(call.ctx.market, symbol)
    kind = params.integer("type", low=1, high=2)
    start = params.integer("startTime", low=0)
    end = params.integer("endTime", low=0)
    limit = params.limit(500, 1000)
    async with call.ctx.db.reader() as session:
        await _portfolio(call, session)
        rows = await position_service.margin_history(
            session,
            call.portfolio_id,
            symbol=instrument.symbol,
            kind=kind,
            start_ms=start,
            end_ms=end,
            limit=limit,
        )
    return [
        {
            "symbol": row.symbol,
            "type": row.type,
            "deltaType": "USER_ADJUST",
            "amount": translate.money(row.amount),
            "asset": "USDT",
            "time": row.created_at,
            "positionSide": row.position_side,
        }
        for row in rows
    ]


@endpoint("GET", "/v1/symbolConfig", signed=True, weight=5)
async def symbol_config(call: Call) -> Any:
    only = _symbol_filter(call)
    snap = await _snapshot(call)
    symbols = [only.symbol] if only else sorted(snap.instruments)
    return [
        {
            "symbol": s,
            "marginType": "ISOLATED" if snap.isolated(s) else "CROSSED",
            "isAutoAddMargin": "false",
            "leverage": snap.leverage(s),
            "maxNotionalValue": snap.max_notional(s),
        }
        for s in symbols
    ]


@endpoint("GET", "/v1/accountConfig", signed=True, weight=5)
async def account_config(call: Call) -> Any:
    async with call.ctx.db.reader() as session:
        portfolio = await _portfolio(call, session)
    return {
        "feeTier": 0,
        "canTrade": True,
        "canDeposit": False,
        "canWithdraw": False,
        "dualSidePosition": portfolio.dual_side_position,
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
