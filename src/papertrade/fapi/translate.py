"""Domain records → Binance wire objects: decimals as strings, ids and times as integers."""

from decimal import ROUND_HALF_EVEN, Context, Decimal
from typing import Any

from papertrade.kit.decimals import ZERO
from papertrade.models import Fill, LedgerEntry
from papertrade.orders.record import AnyOrder
from papertrade.trading.values import Bracket, FundingRecord, Instrument, Kline, Quote, Ticker24h

WIDE = Context(prec=80)
MONEY_PLACES = 8
MONEY_QUANTUM = Decimal(1).scaleb(-MONEY_PLACES)
ZERO_MONEY = format(ZERO.quantize(MONEY_QUANTUM), "f")  # "0.00000000"
_QUANTA: dict[int, Decimal] = {}  # places -> 10**-places
_ZERO_TEXT: dict[int | None, str] = {}  # places -> what dec() writes for a zero
PERPETUAL_DELIVERY = 4133404800000
STATUS = {
    "new": "NEW",
    "partially_filled": "PARTIALLY_FILLED",
    "filled": "FILLED",
    "canceled": "CANCELED",
    "rejected": "REJECTED",
    "expired": "EXPIRED",
}
INCOME_TYPES = {
    "realized_pnl": "REALIZED_PNL",
    "liquidation": "REALIZED_PNL",
    "commission": "COMMISSION",
    "funding": "FUNDING_FEE",
    "deposit": "TRANSFER",
    "top_up": "TRANSFER",
    "reset": "TRANSFER",
}


def dec(value: Decimal | None, places: int | None = None) -> str:
    """A plain decimal string with at least `places` decimals; never drops a real digit."""
    if not value:  # None or a zero: its text depends on `places` alone (an account has many)
        text = _ZERO_TEXT.get(places)
        if text is None:
            text = _ZERO_TEXT[places] = _dec(ZERO, places)
        return text
    return _dec(value, places)


def _dec(value: Decimal, places: int | None) -> str:
    if value.is_zero():
        value = value.copy_abs()
    if places is not None:
        quantum = _QUANTA.get(places) or _QUANTA.setdefault(places, Decimal(1).scaleb(-places))
        fixed = value.quantize(quantum, rounding=ROUND_HALF_EVEN, context=WIDE)
        if fixed == value:
            return format(fixed, "f")
    return format(value.normalize(WIDE), "f")


def plain(value: Decimal) -> str:
    """A decimal exactly as the source wrote it ("0.10" stays "0.10")."""
    return format(value.copy_abs() if value.is_zero() else value, "f")


def money(value: Decimal | None) -> str:
    """A USDT amount with Binance's 8 decimals (rounded half-even past the 8th)."""
    if not value:  # None or a zero
        return ZERO_MONEY
    value = value.quantize(MONEY_QUANTUM, rounding=ROUND_HALF_EVEN, context=WIDE)
    return format(value.copy_abs() if value.is_zero() else value, "f")


def price_places(instrument: Instrument | None) -> int | None:
    return instrument.price_precision if instrument else None


def qty_places(instrument: Instrument | None) -> int | None:
    return instrument.quantity_precision if instrument else None


def order_wire(
    order: AnyOrder, instrument: Instrument | None, *, with_time: bool
) -> dict[str, Any]:
    """An order as /fapi/v1/order answers it (`time` on queries, `cumQty` on create/cancel)."""
    pp, qp = price_places(instrument), qty_places(instrument)
    order_type = order.type.upper()
    body: dict[str, Any] = {
        "orderId": order.id,
        "symbol": order.symbol,
        "status": STATUS.get(order.status, order.status.upper()),
        "clientOrderId": order.client_order_id,
        "price": dec(order.price, pp) if order.price is not None else "0",
        "avgPrice": dec(order.avg_price, pp),
        "origQty": dec(order.quantity, qp),
        "executedQty": dec(order.filled_quantity, qp),
    }
    if not with_time:
        body["cumQty"] = body["executedQty"]
    body.update(
        {
            "cumQuote": money(order.filled_quote),
            "timeInForce": order.time_in_force,
            "type": order_type,
            # In hedge mode an order closes by its position side, never with reduceOnly.
            "reduceOnly": order.action == "close" and order.position_side == "BOTH",
            "closePosition": False,
            "side": order.side.upper(),
            "positionSide": order.position_side,
            "stopPrice": "0",
            "workingType": "CONTRACT_PRICE",
            "priceProtect": False,
            "origType": order_type,
            "priceMatch": "NONE",
            "selfTradePreventionMode": "EXPIRE_MAKER",
            "goodTillDate": 0,
            "updateTime": order.updated_at,
        }
    )
    if with_time:
        body["time"] = order.created_at
    return body


def trade_wire(fill: Fill, instrument: Instrument | None) -> dict[str, Any]:
    """A fill as /fapi/v1/userTrades lists it (no spot-only keys: ccxt reads them as spot)."""
    return {
        "symbol": fill.symbol,
        "id": fill.id,
        "orderId": fill.order_id,
        "side": fill.side.upper(),
        "price": dec(fill.price, price_places(instrument)),
        "qty": dec(fill.quantity, qty_places(instrument)),
        "realizedPnl": money(fill.realized_pnl),
        "quoteQty": money(fill.quote_quantity),
        "commission": money(fill.commission),
        "commissionAsset": "USDT",
        "time": fill.created_at,
        "positionSide": fill.position_side,
        "buyer": fill.side == "buy",
        "maker": fill.liquidity == "maker",
    }


def income_wire(entry: LedgerEntry) -> dict[str, Any]:
    """A ledger entry as /fapi/v1/income lists it."""
    income_type = INCOME_TYPES.get(entry.kind, entry.kind.upper())
    info = {"deposit": "DEPOSIT", "top_up": "TOP_UP", "reset": "RESET"}.get(entry.kind, "")
    if entry.kind == "liquidation":
        info = "LIQUIDATION"
    return {
        "symbol": entry.symbol or "",
        "incomeType": income_type,
        "income": money(entry.amount),
        "asset": "USDT",
        "info": info,
        "time": entry.created_at,
        "tranId": entry.id,
        "tradeId": str(entry.fill_id) if entry.fill_id else "",
    }


def _number(value: Decimal) -> int | float:
    """A JSON number (leverageBracket sends numbers, not strings)."""
    return int(value) if value == value.to_integral_value() else float(value)


def bracket_wire(symbol: str, brackets: tuple[Bracket, ...]) -> dict[str, Any]:
    return {
        "symbol": symbol,
        "brackets": [
            {
                "bracket": b.bracket,
                "initialLeverage": b.initial_leverage,
                "notionalCap": _number(b.notional_cap),
                "notionalFloor": _number(b.notional_floor),
                "maintMarginRatio": float(b.maint_margin_ratio),
                "cum": float(b.cum),
            }
            for b in brackets
        ],
    }


def symbol_wire(instrument: Instrument) -> dict[str, Any]:
    """One exchangeInfo symbol with every field ccxt and freqtrade read (contract §4.3)."""
    i = instrument
    first = i.brackets[0] if i.brackets else None
    maint = first.maint_margin_ratio * 100 if first else Decimal("2.5")
    required = Decimal(100) / i.max_leverage
    return {
        "symbol": i.symbol,
        "pair": i.symbol,
        "contractType": "PERPETUAL",
        "deliveryDate": PERPETUAL_DELIVERY,
        "onboardDate": i.onboard_date,
        "status": "TRADING",
        "maintMarginPercent": dec(maint, 4),
        "requiredMarginPercent": dec(required.quantize(Decimal("0.0001")), 4),
        "baseAsset": i.base_asset,
        "quoteAsset": i.quote_asset,
        "marginAsset": "USDT",
        "pricePrecision": i.price_precision,
        "quantityPrecision": i.quantity_precision,
        "baseAssetPrecision": 8,
        "quotePrecision": 8,
        "underlyingType": "COIN",
        "underlyingSubType": [],
        "settlePlan": 0,
        "triggerProtect": "0.0500",
        "liquidationFee": "0.012500",
        "marketTakeBound": "0.05",
        "maxMoveOrderLimit": 10000,
        "filters": [
            {
                "filterType": "PRICE_FILTER",
                "minPrice": plain(i.min_price),
                "maxPrice": plain(i.max_price),
                "tickSize": plain(i.tick_size),
            },
            {
                "filterType": "LOT_SIZE",
                "minQty": plain(i.min_qty),
                "maxQty": plain(i.max_qty),
                "stepSize": plain(i.step_size),
            },
            {
                "filterType": "MARKET_LOT_SIZE",
                "minQty": plain(i.min_qty),
                "maxQty": plain(i.market_max_qty),
                "stepSize": plain(i.step_size),
            },
            {"filterType": "MAX_NUM_ORDERS", "limit": 200},
            {"filterType": "MAX_NUM_ALGO_ORDERS", "limit": 10},
            {"filterType": "MIN_NOTIONAL", "notional": plain(i.min_notional)},
            {
                "filterType": "PERCENT_PRICE",
                "multiplierUp": "1.0500",
                "multiplierDown": "0.9500",
                "multiplierDecimal": "4",
            },
        ],
        "orderTypes": [
            "LIMIT",
            "MARKET",
            "STOP",
            "STOP_MARKET",
            "TAKE_PROFIT",
            "TAKE_PROFIT_MARKET",
            "TRAILING_STOP_MARKET",
        ],
        "timeInForce": ["GTC", "IOC", "FOK", "GTX"],
    }


def kline_row(k: Kline, instrument: Instrument, *, prices_only: bool = False) -> list[Any]:
    """A 12-element kline row; mark/index candles carry "0" volumes as on Binance."""
    pp, qp = instrument.price_precision, instrument.quantity_precision
    volume = "0" if prices_only else dec(k.volume, qp)
    return [
        k.open_time,
        dec(k.open, pp),
        dec(k.high, pp),
        dec(k.low, pp),
        dec(k.close, pp),
        volume,
        k.close_time,
        "0" if prices_only else dec(k.quote_volume, 2),
        0 if prices_only else k.trades,
        "0" if prices_only else dec(k.taker_buy_volume, qp),
        "0" if prices_only else dec(k.taker_buy_quote_volume, 2),
        "0",
    ]


def ticker_wire(t: Ticker24h, instrument: Instrument) -> dict[str, Any]:
    pp = instrument.price_precision
    change = t.last_price - t.open_price
    extra = t.extra
    return {
        "symbol": t.symbol,
        "priceChange": extra.get("priceChange") or dec(change, pp),
        "priceChangePercent": extra.get("priceChangePercent") or "0.000",
        "weightedAvgPrice": extra.get("weightedAvgPrice") or dec(t.last_price, pp),
        "lastPrice": dec(t.last_price, pp),
        "lastQty": extra.get("lastQty") or dec(instrument.min_qty),
        "openPrice": dec(t.open_price, pp),
        "highPrice": dec(t.high_price, pp),
        "lowPrice": dec(t.low_price, pp),
        "volume": dec(t.volume, instrument.quantity_precision),
        "quoteVolume": dec(t.quote_volume, 2),
        "openTime": t.open_time,
        "closeTime": t.close_time,
        "firstId": 0,
        "lastId": max(0, t.count - 1),
        "count": t.count,
    }


def premium_wire(q: Quote, instrument: Instrument) -> dict[str, Any]:
    pp = instrument.price_precision
    return {
        "symbol": q.symbol,
        "markPrice": dec(q.mark_price, pp),
        "indexPrice": dec(q.index_price, pp),
        "estimatedSettlePrice": dec(q.index_price, pp),
        "lastFundingRate": dec(q.funding_rate, 8),
        "interestRate": "0.00010000",
        "nextFundingTime": q.next_funding_time,
        "time": q.time,
    }


def price_wire(q: Quote, instrument: Instrument) -> dict[str, Any]:
    return {
        "symbol": q.symbol,
        "price": dec(q.last_price, instrument.price_precision),
        "time": q.time,
    }


def funding_wire(r: FundingRecord, instrument: Instrument) -> dict[str, Any]:
    return {
        "symbol": r.symbol,
        "fundingRate": dec(r.funding_rate, 8),
        "fundingTime": r.funding_time,
        "markPrice": dec(r.mark_price, 8),
    }
