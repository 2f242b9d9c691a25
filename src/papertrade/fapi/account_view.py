"""The bound portfolio's account, balances and positions in Binance's v2 and v3 shapes."""

from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from sqlalchemy import bindparam, select

from papertrade.auth.principal import Principal
from papertrade.context import AppContext
from papertrade.fapi.translate import dec, money
from papertrade.kit.decimals import ZERO
from papertrade.kit.time import now_ms
from papertrade.models import Order, Portfolio, Position
from papertrade.orders.pricing import require_feed
from papertrade.portfolios import service as portfolio_service
from papertrade.positions import service as position_service
from papertrade.positions.service import PositionView
from papertrade.trading import margin
from papertrade.trading.enums import MarginType, PositionSide
from papertrade.trading.errors import InvalidLeverage
from papertrade.trading.margin import AccountState
from papertrade.trading.values import Instrument

MAX_ORDERS = 10_000


@dataclass
class OpenSide:
    """A symbol's resting orders: reserved margin and notional per side."""

    margin: Decimal = ZERO
    bid: Decimal = ZERO
    ask: Decimal = ZERO


@dataclass
class Snapshot:
    """Everything the account endpoints show, read once. Positions, views and open orders are
    keyed by position_service.position_key: the symbol in one-way mode, symbol:SIDE in hedge."""

    portfolio: Portfolio
    state: AccountState
    instruments: dict[str, Instrument]
    positions: dict[str, Position]
    views: dict[str, PositionView]
    marks: dict[str, Decimal]
    open_orders: dict[str, OpenSide] = field(default_factory=dict)
    default_leverage: int = 20
    time: int = field(default_factory=now_ms)

    def _row(self, symbol: str) -> Position | None:
        return self.positions.get(symbol) or position_service.sibling(self.positions, symbol)

    def leverage(self, symbol: str) -> int:
        held = self._row(symbol)
        if held is not None:
            return held.leverage
        return min(self.default_leverage, self.instruments[symbol].max_leverage)

    def isolated(self, symbol: str) -> bool:
        held = self._row(symbol)
        return held is not None and held.margin_type == MarginType.ISOLATED

    def max_notional(self, symbol: str) -> str:
        try:
            cap = margin.max_notional_for_leverage(self.instruments[symbol], self.leverage(symbol))
        except InvalidLeverage:
            cap = ZERO
        return dec(cap)

    def sides(self) -> tuple[PositionSide, ...]:
        return position_service.mode_sides(self.portfolio.dual_side_position)

    def busy_symbols(self) -> set[str]:
        """Symbols with a position row (a flat one still holds the symbol's leverage and margin
        type) or resting orders; every other symbol's row is the same on every request."""
        held = {row.symbol for row in self.positions.values()}
        return held | {key.split(":")[0] for key in self.open_orders}

    def active_symbols(self) -> list[str]:
        """Symbols with a position or open orders (what v3 lists)."""
        held = {v.position.symbol for v in self.views.values()}
        held |= {key.split(":")[0] for key in self.open_orders}
        return sorted(s for s in held if s in self.instruments)


# Built once, the portfolio a parameter: SQLAlchemy derives the cache key of a statement built
# for each request again at every execution, which cost a third of this read. Two statements,
# not three: the portfolio comes with its position rows (an outer join, so a portfolio without
# any still comes). Both are read as plain columns (Database.read_all: on PostgreSQL through
# asyncpg itself, one connection for both), which spares the ORM's and the session's work per
# statement; the portfolio and its positions become objects of their own (never in a session).
_PORTFOLIO = Portfolio.__table__.c
_POSITION = Position.__table__.c
_AS_POSITION = {f"position_{column.key}": column.key for column in _POSITION}
_PORTFOLIO_POSITIONS = (
    select(*_PORTFOLIO, *(_POSITION[key].label(label) for label, key in _AS_POSITION.items()))
    .select_from(
        Portfolio.__table__.outerjoin(Position.__table__, _POSITION.portfolio_id == _PORTFOLIO.id)
    )
    .where(_PORTFOLIO.id == bindparam("portfolio_id"))
)
_ORDERS = Order.__table__.c
_OPEN_ORDERS = (
    select(
        _ORDERS.symbol,
        _ORDERS.position_side,
        _ORDERS.side,
        _ORDERS.reserved_margin,
        _ORDERS.quantity,
        _ORDERS.filled_quantity,
        _ORDERS.price,
    )
    .where(_ORDERS.portfolio_id == bindparam("portfolio_id"), _ORDERS.is_open.is_(True))
    .order_by(_ORDERS.id.desc())
    .limit(MAX_ORDERS)
)


async def read_snapshot(ctx: AppContext, principal: Principal, portfolio_id: int) -> Snapshot:
    """The caller's portfolio (else a 404), its positions and open orders, valued at the current
    marks."""
    params = {"portfolio_id": portfolio_id}
    joined, orders = await ctx.db.read_all([(_PORTFOLIO_POSITIONS, params), (_OPEN_ORDERS, params)])
    found = (
        Portfolio(**{column.key: joined[0][column.key] for column in _PORTFOLIO})
        if joined
        else None
    )
    positions: dict[str, Position] = {}
    for row in joined:
        if row["position_id"] is not None:
            position = Position(**{key: row[label] for label, key in _AS_POSITION.items()})
            positions[position_service.key_of(position)] = position
    portfolio = portfolio_service.check_owned(found, principal, portfolio_id)
    feed = require_feed(ctx.market)
    open_orders: dict[str, OpenSide] = {}
    for order in orders:
        key = position_service.position_key(order["symbol"], order["position_side"])
        side = open_orders.setdefault(key, OpenSide())
        side.margin += order["reserved_margin"]
        remaining = (order["quantity"] - order["filled_quantity"]) * (order["price"] or ZERO)
        if order["side"] == "buy":
            side.bid += remaining
        else:
            side.ask += remaining
    open_margin = sum((s.margin for s in open_orders.values()), ZERO)
    state, views = position_service.account(feed, portfolio, list(positions.values()), open_margin)
    marks = {symbol: quote.mark_price for symbol, quote in feed.quotes().items()}
    return Snapshot(
        portfolio=portfolio,
        state=state,
        instruments=feed.instruments(),
        positions=positions,
        views={position_service.key_of(v.position): v for v in views},
        marks=marks,
        open_orders=open_orders,
        default_leverage=ctx.settings.default_leverage,
    )


def _break_even(view: PositionView, taker_rate: Decimal) -> Decimal:
    # Entry moved by the taker fee paid on opening and on closing at that price.
    entry, qty = view.position.entry_price, view.position.quantity
    if qty > ZERO:
        return entry * (1 + taker_rate) / (1 - taker_rate)
    return entry * (1 - taker_rate) / (1 + taker_rate)


def _figures(snap: Snapshot, symbol: str, position_side: str) -> dict[str, Any]:
    """The per-position numbers shared by every position shape."""
    instrument = snap.instruments[symbol]
    key = position_service.position_key(symbol, position_side)
    view = snap.views.get(key)
    side = snap.open_orders.get(key, OpenSide())
    pp, qp = instrument.price_precision, instrument.quantity_precision
    position = snap.positions.get(key)
    isolated = snap.isolated(symbol)
    wallet = position.isolated_margin if position is not None and isolated else ZERO
    common = {
        "positionSide": position_side,
        "marginType": "isolated" if isolated else "cross",
        "isolated": isolated,
        "isolatedWallet": money(wallet),
        "isolatedMargin": money(wallet + (view.unrealized_pnl if view and isolated else ZERO)),
    }
    if view is None:
        mark = snap.marks.get(symbol, ZERO)
        return {
            "positionAmt": dec(ZERO, qp),
            "entryPrice": dec(ZERO, pp),
            "breakEvenPrice": dec(ZERO, pp),
            "markPrice": money(mark),
            "unRealizedProfit": money(ZERO),
            "liquidationPrice": "0",
            "notional": money(ZERO),
            "positionInitialMargin": money(ZERO),
            "openOrderInitialMargin": money(side.margin),
            "initialMargin": money(side.margin),
            "maintMargin": money(ZERO),
            "bidNotional": money(side.bid),
            "askNotional": money(side.ask),
            "updateTime": position.updated_at if position else 0,
            **common,
        }
    liquidation = view.liquidation_price
    return {
        **common,
        "positionAmt": dec(view.position.quantity, qp),
        "entryPrice": dec(view.position.entry_price, pp),
        "breakEvenPrice": dec(
            _break_even(view, snap.portfolio.taker_fee_rate).quantize(Decimal("0.00000001")), pp
        ),
        "markPrice": money(view.mark),
        "unRealizedProfit": money(view.unrealized_pnl),
        "liquidationPrice": money(liquidation) if liquidation and liquidation > 0 else "0",
        "notional": money(view.notional),
        "positionInitialMargin": money(view.margin),
        "openOrderInitialMargin": money(side.margin),
        "initialMargin": money(view.margin + side.margin),
        "maintMargin": money(view.maintenance),
        "bidNotional": money(side.bid),
        "askNotional": money(side.ask),
        "updateTime": view.position.updated_at,
    }


def position_risk_v3(snap: Snapshot, symbol: str, position_side: str) -> dict[str, Any]:
    f = _figures(snap, symbol, position_side)
    return {
        "symbol": symbol,
        "positionSide": f["positionSide"],
        "positionAmt": f["positionAmt"],
        "entryPrice": f["entryPrice"],
        "breakEvenPrice": f["breakEvenPrice"],
        "markPrice": f["markPrice"],
        "unRealizedProfit": f["unRealizedProfit"],
        "liquidationPrice": f["liquidationPrice"],
        "isolatedMargin": f["isolatedMargin"],
        "notional": f["notional"],
        "marginAsset": "USDT",
        "isolatedWallet": f["isolatedWallet"],
        "initialMargin": f["initialMargin"],
        "maintMargin": f["maintMargin"],
        "positionInitialMargin": f["positionInitialMargin"],
        "openOrderInitialMargin": f["openOrderInitialMargin"],
        "adl": 0,
        "bidNotional": f["bidNotional"],
        "askNotional": f["askNotional"],
        "updateTime": f["updateTime"],
    }


def position_risk_v2(snap: Snapshot, symbol: str, position_side: str) -> dict[str, Any]:
    f = _figures(snap, symbol, position_side)
    return {
        "symbol": symbol,
        "positionAmt": f["positionAmt"],
        "entryPrice": f["entryPrice"],
        "breakEvenPrice": f["breakEvenPrice"],
        "markPrice": f["markPrice"],
        "unRealizedProfit": f["unRealizedProfit"],
        "liquidationPrice": f["liquidationPrice"],
        "leverage": str(snap.leverage(symbol)),
        "maxNotionalValue": snap.max_notional(symbol),
        "marginType": f["marginType"],
        "isolatedMargin": f["isolatedMargin"],
        "isAutoAddMargin": "false",
        "positionSide": f["positionSide"],
        "notional": f["notional"],
        "isolatedWallet": f["isolatedWallet"],
        "updateTime": f["updateTime"],
    }


def _account_position_v3(snap: Snapshot, symbol: str, position_side: str) -> dict[str, Any]:
    f = _figures(snap, symbol, position_side)
    return {
        "symbol": symbol,
        "positionSide": f["positionSide"],
        "positionAmt": f["positionAmt"],
        "unrealizedProfit": f["unRealizedProfit"],
        "isolatedMargin": f["isolatedMargin"],
        "notional": f["notional"],
        "isolatedWallet": f["isolatedWallet"],
        "initialMargin": f["initialMargin"],
        "maintMargin": f["maintMargin"],
        "updateTime": f["updateTime"],
    }


# v2 /account lists every symbol; a symbol the portfolio has no position row and no open order
# in shows the same row on every request (no mark price in it), so it is written once per
# instrument (the feed's object, compared by identity), side and default leverage.
_IDLE_ROWS: dict[tuple[int, str, int], tuple[Instrument, dict[str, Any]]] = {}
MAX_IDLE_ROWS = 10_000


def _idle_position_v2(snap: Snapshot, symbol: str, position_side: str) -> dict[str, Any]:
    instrument = snap.instruments[symbol]
    idle = (id(instrument), position_side, snap.default_leverage)
    found = _IDLE_ROWS.get(idle)
    if found is None or found[0] is not instrument:
        if len(_IDLE_ROWS) >= MAX_IDLE_ROWS:
            _IDLE_ROWS.clear()
        found = _IDLE_ROWS[idle] = (
            instrument,
            _account_position_v2_of(snap, symbol, position_side),
        )
    return found[1]  # shared by every response that shows it: responses are only serialised


def _account_position_v2_of(snap: Snapshot, symbol: str, position_side: str) -> dict[str, Any]:
    f = _figures(snap, symbol, position_side)
    return {
        "symbol": symbol,
        "initialMargin": f["initialMargin"],
        "maintMargin": f["maintMargin"],
        "unrealizedProfit": f["unRealizedProfit"],
        "positionInitialMargin": f["positionInitialMargin"],
        "openOrderInitialMargin": f["openOrderInitialMargin"],
        "leverage": str(snap.leverage(symbol)),
        "isolated": f["isolated"],
        "entryPrice": f["entryPrice"],
        "breakEvenPrice": f["breakEvenPrice"],
        "maxNotional": snap.max_notional(symbol),
        "bidNotional": f["bidNotional"],
        "askNotional": f["askNotional"],
        "positionSide": f["positionSide"],
        "positionAmt": f["positionAmt"],
        "notional": f["notional"],
        "isolatedWallet": f["isolatedWallet"],
        "updateTime": f["updateTime"],
    }


def rows_of(snap: Snapshot, symbols: list[str]) -> list[tuple[str, str]]:
    """(symbol, position side) of every position row shown: one per symbol in one-way mode,
    LONG and SHORT in hedge mode (Binance lists both sides)."""
    sides = [side.value for side in snap.sides()]
    return [(symbol, side) for symbol in symbols for side in sides]


def _totals(snap: Snapshot) -> dict[str, str]:
    s = snap.state
    available = s.available_balance
    return {
        "totalInitialMargin": money(s.position_initial_margin + s.open_order_margin),
        "totalMaintMargin": money(s.maintenance_margin),
        "totalWalletBalance": money(s.wallet_balance),
        "totalUnrealizedProfit": money(s.unrealized_pnl),
        "totalMarginBalance": money(s.equity),
        "totalPositionInitialMargin": money(s.position_initial_margin),
        "totalOpenOrderInitialMargin": money(s.open_order_margin),
        "totalCrossWalletBalance": money(s.cross_wallet_balance),
        "totalCrossUnPnl": money(s.cross_unrealized_pnl),
        "availableBalance": money(available),
        "maxWithdrawAmount": money(max(ZERO, min(available, s.cross_wallet_balance))),
    }


def _asset(snap: Snapshot) -> dict[str, Any]:
    s, t = snap.state, _totals(snap)
    return {
        "asset": "USDT",
        "walletBalance": t["totalWalletBalance"],
        "unrealizedProfit": t["totalUnrealizedProfit"],
        "marginBalance": t["totalMarginBalance"],
        "maintMargin": t["totalMaintMargin"],
        "initialMargin": t["totalInitialMargin"],
        "positionInitialMargin": money(s.position_initial_margin),
        "openOrderInitialMargin": money(s.open_order_margin),
        "crossWalletBalance": t["totalCrossWalletBalance"],
        "crossUnPnl": t["totalCrossUnPnl"],
        "availableBalance": t["availableBalance"],
        "maxWithdrawAmount": t["maxWithdrawAmount"],
        "marginAvailable": True,
        # ccxt skips assets whose updateTime is 0, so this is always a real time.
        "updateTime": snap.time,
    }


def account_v3(snap: Snapshot) -> dict[str, Any]:
    return {
        **_totals(snap),
        "assets": [_asset(snap)],
        "positions": [
            _account_position_v3(snap, s, side) for s, side in rows_of(snap, snap.active_symbols())
        ],
    }


def account_v2(snap: Snapshot) -> dict[str, Any]:
    busy = snap.busy_symbols()
    return {
        "feeTier": 0,
        "feeBurn": False,
        "canTrade": True,
        "canDeposit": False,
        "canWithdraw": False,
        "updateTime": snap.time,
        "multiAssetsMargin": False,
        "tradeGroupId": -1,
        **_totals(snap),
        "assets": [_asset(snap)],
        "positions": [
            _account_position_v2_of(snap, s, side)
            if s in busy
            else _idle_position_v2(snap, s, side)
            for s, side in rows_of(snap, sorted(snap.instruments))
        ],
    }


def balances(snap: Snapshot) -> list[dict[str, Any]]:
    t = _totals(snap)
    return [
        {
            "accountAlias": snap.portfolio.code,
            "asset": "USDT",
            "balance": t["totalWalletBalance"],
            "crossWalletBalance": t["totalCrossWalletBalance"],
            "crossUnPnl": t["totalCrossUnPnl"],
            "availableBalance": t["availableBalance"],
            "maxWithdrawAmount": t["maxWithdrawAmount"],
            "marginAvailable": True,
            "updateTime": snap.time,
        }
    ]
