"""Margin maths: initial and maintenance margin, account summary, liquidation price, for cross
positions (margined by the whole balance) and isolated ones (margined by their own margin only).

Open-order margin simplification (documented in `open_order_margin`): per symbol, each side's
resting limits are charged `price × quantity / leverage` only for the quantity left after the
orders that fill first have used up the opposite position; the symbol is charged the larger of
the two sides, not their sum, because whichever side fills first turns the other into a reducer.
"""

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Protocol

from papertrade.kit.decimals import ZERO, money_text
from papertrade.trading.enums import Side
from papertrade.trading.errors import InsufficientMargin, InvalidLeverage, MaxPositionExceeded
from papertrade.trading.position import unrealized_pnl
from papertrade.trading.values import Bracket, Instrument


class OpenOrderLike(Protocol):
    """Anything with a side, a limit price and a remaining quantity (RestingOrder, ORM rows)."""

    @property
    def side(self) -> Side: ...

    @property
    def price(self) -> Decimal: ...

    @property
    def quantity(self) -> Decimal: ...


def initial_margin(notional_abs: Decimal, leverage: int) -> Decimal:
    """Initial margin of an absolute notional at a leverage."""
    if leverage < 1:
        raise InvalidLeverage(f"leverage must be at least 1, got {leverage}")
    return abs(notional_abs) / leverage


def maintenance_margin(instrument: Instrument, notional_abs: Decimal) -> Decimal:
    """Maintenance margin of an absolute notional from its bracket: notional × ratio − cum."""
    if not instrument.brackets:
        raise ValueError(f"{instrument.symbol} has no leverage brackets")
    size = abs(notional_abs)
    if size == ZERO:
        return ZERO
    bracket = instrument.bracket_for(size)
    return size * bracket.maint_margin_ratio - bracket.cum


def max_notional_for_leverage(instrument: Instrument, leverage: int) -> Decimal:
    """Largest position notional allowed at this leverage (the top cap of brackets allowing it)."""
    caps = [b.notional_cap for b in instrument.brackets if b.initial_leverage >= leverage]
    if leverage < 1 or not caps:
        raise InvalidLeverage(
            f"leverage {leverage} is outside 1..{instrument.max_leverage} for {instrument.symbol}"
        )
    return max(caps)


def check_leverage(instrument: Instrument, leverage: int, notional_abs: Decimal = ZERO) -> None:
    """Raise InvalidLeverage or MaxPositionExceeded when the leverage or notional is not allowed."""
    if not 1 <= leverage <= instrument.max_leverage:
        raise InvalidLeverage(
            f"leverage {leverage} is outside 1..{instrument.max_leverage} for {instrument.symbol}"
        )
    if instrument.brackets:
        cap = max_notional_for_leverage(instrument, leverage)
        if abs(notional_abs) > cap:
            raise MaxPositionExceeded(
                f"notional {money_text(abs(notional_abs))} exceeds {money_text(cap)} allowed "
                f"at {leverage}x"
            )


def _side_exposure(orders: list[OpenOrderLike], offset: Decimal) -> Decimal:
    # `orders` are in fill order; the first `offset` quantity only closes the opposite position.
    free = offset
    total = ZERO
    for order in orders:
        reducing = min(order.quantity, free)
        free -= reducing
        total += (order.quantity - reducing) * order.price
    return total


def open_order_margin(
    position_qty: Decimal, orders: Iterable[OpenOrderLike], leverage: int
) -> Decimal:
    """Initial margin held by one symbol's resting limit orders (see the module docstring)."""
    # Simplification: buys are taken highest price first (the order a falling price fills them),
    # sells lowest first; on each side the quantity that would only close the current opposite
    # position is free, the rest costs limit price × quantity / leverage. The symbol is charged
    # max(buy side, sell side), since whichever fills first makes the other side a reducer.
    # Binance's extra "open loss" on orders priced through the mark is ignored. Reduce-only
    # orders never add exposure: the caller leaves them out.
    buys = sorted((o for o in orders if o.side is Side.BUY), key=lambda o: o.price, reverse=True)
    sells = sorted((o for o in orders if o.side is Side.SELL), key=lambda o: o.price)
    buy_notional = _side_exposure(buys, max(ZERO, -position_qty))
    sell_notional = _side_exposure(sells, max(ZERO, position_qty))
    return initial_margin(max(buy_notional, sell_notional), leverage)


def ensure_margin(required: Decimal, available: Decimal) -> None:
    """Raise InsufficientMargin when `available` does not cover `required`."""
    if required > available:
        raise InsufficientMargin(
            f"margin required {money_text(required)} exceeds available {money_text(available)}"
        )


@dataclass(frozen=True, slots=True)
class PositionInput:
    """One open position as the account summary needs it."""

    instrument: Instrument
    qty: Decimal  # signed
    entry: Decimal
    mark: Decimal
    leverage: int
    # The margin moved into an isolated position (its isolated wallet); None: cross.
    isolated_margin: Decimal | None = None

    @property
    def isolated(self) -> bool:
        return self.isolated_margin is not None


@dataclass(frozen=True, slots=True)
class AccountState:
    """Account summary at the current marks. `wallet_balance` counts the isolated positions'
    margin too (Binance's totalWalletBalance); the cross_* figures are the cross part alone,
    what cross liquidation and the available balance are judged on."""

    wallet_balance: Decimal
    unrealized_pnl: Decimal
    equity: Decimal  # margin balance = wallet balance + unrealized PnL
    position_initial_margin: Decimal
    maintenance_margin: Decimal
    open_order_margin: Decimal
    available_balance_raw: Decimal  # may be negative; keep it for checks
    cross_wallet_balance: Decimal = ZERO
    cross_unrealized_pnl: Decimal = ZERO
    cross_maintenance_margin: Decimal = ZERO

    @property
    def available_balance(self) -> Decimal:
        """Available balance as shown to users: never below zero."""
        return max(ZERO, self.available_balance_raw)

    @property
    def cross_equity(self) -> Decimal:
        return self.cross_wallet_balance + self.cross_unrealized_pnl

    @property
    def is_liquidatable(self) -> bool:
        """Cross margin: liquidate the cross positions when the cross equity no longer exceeds
        their maintenance margin (isolated positions are judged alone: isolated_liquidatable)."""
        return (
            self.cross_maintenance_margin > ZERO
            and self.cross_equity <= self.cross_maintenance_margin
        )

    @property
    def margin_ratio(self) -> Decimal | None:
        """Maintenance margin / equity (1 = liquidation); None when equity is not positive."""
        if self.equity <= ZERO:
            return None
        return self.maintenance_margin / self.equity


def account_state(
    wallet_balance: Decimal,
    positions: Sequence[PositionInput],
    open_order_margin: Decimal = ZERO,
) -> AccountState:
    """Summarise an account from its balance (the cross wallet: isolated margin has left it),
    positions and open-order margin. Available = cross wallet + cross unrealized PnL − cross
    positions' initial margin − open orders' margin, as Binance computes it: an isolated
    position's profit is not available until it is closed."""
    upnl = im = mm = isolated_wallet = ZERO
    cross_upnl = cross_im = cross_mm = ZERO
    for p in positions:
        if p.qty == ZERO:
            continue
        size = abs(p.qty) * p.mark
        pnl = unrealized_pnl(p.qty, p.entry, p.mark)
        position_im = initial_margin(size, p.leverage)
        position_mm = maintenance_margin(p.instrument, size)
        upnl += pnl
        im += position_im
        mm += position_mm
        if p.isolated_margin is not None:
            isolated_wallet += p.isolated_margin
        else:
            cross_upnl += pnl
            cross_im += position_im
            cross_mm += position_mm
    total_wallet = wallet_balance + isolated_wallet
    equity = total_wallet + upnl
    available = wallet_balance + cross_upnl - cross_im - open_order_margin
    return AccountState(
        total_wallet,
        upnl,
        equity,
        im,
        mm,
        open_order_margin,
        available,
        wallet_balance,
        cross_upnl,
        cross_mm,
    )


def isolated_liquidatable(p: PositionInput) -> bool:
    """An isolated position is liquidated when its own margin plus its unrealized PnL no longer
    exceeds its maintenance margin; the rest of the account plays no part."""
    if p.isolated_margin is None or p.qty == ZERO:
        return False
    equity = p.isolated_margin + unrealized_pnl(p.qty, p.entry, p.mark)
    return equity <= maintenance_margin(p.instrument, abs(p.qty) * p.mark)


def isolated_removable(p: PositionInput) -> Decimal:
    """How much margin may be taken out of an isolated position: what it holds beyond its
    initial margin at the mark, an unrealized loss counted against it and a profit not."""
    if p.isolated_margin is None:
        return ZERO
    loss = min(ZERO, unrealized_pnl(p.qty, p.entry, p.mark))
    needed = initial_margin(abs(p.qty) * p.mark, p.leverage)
    return max(ZERO, p.isolated_margin + loss - needed)


def _surplus(
    bracket: Bracket, qty: Decimal, entry: Decimal, base: Decimal, price: Decimal
) -> Decimal:
    # Equity minus maintenance at `price` if `bracket` applied there.
    maintenance = abs(qty) * price * bracket.maint_margin_ratio - bracket.cum
    return base + qty * (price - entry) - maintenance


def _root_in(bracket: Bracket, qty: Decimal, entry: Decimal, base: Decimal) -> Decimal | None:
    # Solve base + qty·(P − entry) = |qty|·P·ratio − cum for P: Binance's cross formula
    # LP = (WB − TMM1 + UPNL1 + cumB − side·|qty|·EP) / (|qty|·MMR − side·|qty|).
    denominator = abs(qty) * bracket.maint_margin_ratio - qty
    if denominator == ZERO:
        return None
    return (base + bracket.cum - qty * entry) / denominator


def liquidation_price(
    instrument: Instrument,
    qty: Decimal,
    entry: Decimal,
    wallet_balance: Decimal,
    other_unrealized_pnl: Decimal = ZERO,
    other_maintenance: Decimal = ZERO,
) -> Decimal | None:
    """Cross-margin liquidation price of one position, the rest of the account held constant."""
    # None when flat or when no positive price liquidates (a long whose collateral covers a fall
    # to zero); 0 for a short that is already liquidatable at any price.
    if qty == ZERO or not instrument.brackets:
        return None
    base = wallet_balance + other_unrealized_pnl - other_maintenance
    size = abs(qty)
    last = instrument.brackets[-1]
    # A long is liquidated at the highest price where equity − maintenance <= 0, a short at the
    # lowest. Candidates are each bracket's root that really lies in that bracket, plus bracket
    # edges where the surplus is already <= 0 (with continuous brackets those never win; they
    # matter only when cum values leave maintenance jumping at a boundary).
    candidates: list[Decimal] = []
    for bracket in instrument.brackets:
        root = _root_in(bracket, qty, entry, base)
        if root is not None and root > ZERO and instrument.bracket_for(size * root) == bracket:
            candidates.append(root)
        if qty > ZERO and bracket is not last:
            edge = bracket.notional_cap / size  # approached from below while still in `bracket`
        elif qty < ZERO:
            edge = bracket.notional_floor / size
        else:
            continue
        if _surplus(bracket, qty, entry, base, edge) <= ZERO:
            candidates.append(edge)
    if not candidates:
        return None
    return max(candidates) if qty > ZERO else min(candidates)


def liquidation_prices(
    wallet_balance: Decimal, positions: Sequence[PositionInput]
) -> list[Decimal | None]:
    """Liquidation price of every position. A cross position's holds the other cross positions
    at their current marks (`wallet_balance` is the cross wallet); an isolated position's is
    where its own margin is used up (Binance's isolated formula: the same equation with the
    isolated wallet as the only collateral)."""
    cross = [p.isolated_margin is None for p in positions]
    upnls = [unrealized_pnl(p.qty, p.entry, p.mark) for p in positions]
    mms = [maintenance_margin(p.instrument, abs(p.qty) * p.mark) for p in positions]
    total_upnl = sum((u for u, c in zip(upnls, cross, strict=True) if c), ZERO)
    total_mm = sum((m for m, c in zip(mms, cross, strict=True) if c), ZERO)
    return [
        liquidation_price(
            p.instrument, p.qty, p.entry, wallet_balance, total_upnl - upnl, total_mm - mm
        )
        if p.isolated_margin is None
        else liquidation_price(p.instrument, p.qty, p.entry, p.isolated_margin)
        for p, upnl, mm in zip(positions, upnls, mms, strict=True)
    ]
