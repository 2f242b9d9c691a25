"""Position maths for one-way mode: a signed quantity (negative = short) and an entry price."""

from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, Decimal

from papertrade.kit.decimals import STORE_PLACES, ZERO


@dataclass(frozen=True, slots=True)
class PositionChange:
    """The result of applying one fill to a position."""

    qty_after: Decimal  # signed
    entry_after: Decimal  # 0 when flat
    realized_pnl: Decimal  # on the closed part only; commission is not included
    closed_qty: Decimal  # absolute quantity that reduced the old position
    opened_qty: Decimal  # absolute quantity that opened or increased exposure

    @property
    def flipped(self) -> bool:
        """True when the fill crossed through zero to the other side."""
        return self.closed_qty > ZERO and self.opened_qty > ZERO


def sign(value: Decimal) -> int:
    """+1, 0 or -1: the side of a signed position quantity."""
    return (value > ZERO) - (value < ZERO)


def average_entry(
    qty_before: Decimal, entry_before: Decimal, add_qty: Decimal, price: Decimal
) -> Decimal:
    """Volume-weighted entry after adding to a position, quantised to 8 decimals half-even."""
    total = abs(qty_before) + abs(add_qty)
    if total == ZERO:
        return ZERO
    weighted = abs(qty_before) * entry_before + abs(add_qty) * price
    return (weighted / total).quantize(STORE_PLACES, rounding=ROUND_HALF_EVEN)


def apply_fill(
    qty_before: Decimal, entry_before: Decimal, fill_qty_signed: Decimal, fill_price: Decimal
) -> PositionChange:
    """Apply a signed fill (+ buy, − sell) to a position: open, add, reduce, close or flip."""
    if fill_qty_signed == ZERO:
        return PositionChange(qty_before, entry_before, ZERO, ZERO, ZERO)
    qty_after = qty_before + fill_qty_signed
    side_before = sign(qty_before)
    if side_before == 0 or side_before == sign(fill_qty_signed):
        entry = average_entry(qty_before, entry_before, fill_qty_signed, fill_price)
        return PositionChange(qty_after, entry, ZERO, ZERO, abs(fill_qty_signed))

    closed = min(abs(fill_qty_signed), abs(qty_before))
    # Written as a difference, not a product with -1, so a break-even close is +0, never -0.
    if side_before > 0:
        realized = closed * (fill_price - entry_before)
    else:
        realized = closed * (entry_before - fill_price)
    opened = abs(fill_qty_signed) - closed
    if qty_after == ZERO:
        entry_after = ZERO
    elif opened > ZERO:
        # Flip: the remainder is a brand-new position opened at the fill price.
        entry_after = fill_price
    else:
        entry_after = entry_before
    return PositionChange(qty_after, entry_after, realized, closed, opened)


def unrealized_pnl(qty: Decimal, entry: Decimal, mark: Decimal) -> Decimal:
    """Unrealized PnL of a signed position at the mark price."""
    # `+ ZERO` turns the Decimal("-0") a short at its entry would give into a plain zero.
    return qty * (mark - entry) + ZERO


def notional(qty: Decimal, mark: Decimal) -> Decimal:
    """Signed notional value (negative for shorts), as Binance's positionRisk shows it."""
    return qty * mark


def opening_quantity(qty_before: Decimal, fill_qty_signed: Decimal) -> Decimal:
    """Absolute part of a signed fill that would open or increase exposure (0 for pure reduces)."""
    if qty_before == ZERO or sign(qty_before) == sign(fill_qty_signed):
        return abs(fill_qty_signed)
    return max(ZERO, abs(fill_qty_signed) - abs(qty_before))


def closed_pnl_pct(
    exit_price: Decimal, quantity: Decimal, pnl: Decimal, closing_sign: int
) -> Decimal:
    """Realised PnL as a percent of what the closed part cost at entry (before leverage), to 2
    decimals (a close notice's "+1.52%"). The entry value comes from the exit and the PnL: a
    sell (sign −1) closes a long, pnl = (exit − entry) × qty; a buy (+1) closes a short,
    pnl = (entry − exit) × qty."""
    cost = exit_price * quantity + closing_sign * pnl
    if cost <= ZERO:
        return ZERO
    return (pnl / cost * 100).quantize(Decimal("0.01"), rounding=ROUND_HALF_EVEN)
