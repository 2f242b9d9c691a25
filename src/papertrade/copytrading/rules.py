"""The pure rules of copy trading (docs/social.md): sizes, slippage caps, the revenue share."""

from dataclasses import dataclass
from decimal import ROUND_DOWN, ROUND_UP, Decimal

from papertrade.kit.decimals import ZERO, floor_to_step, usdt6
from papertrade.trading.enums import Side
from papertrade.trading.values import Instrument

HUNDRED = Decimal(100)
MAJORS = frozenset({"BTCUSDT", "ETHUSDT"})
MAJOR_SLIPPAGE_PCT = Decimal("0.5")
OTHER_SLIPPAGE_PCT = Decimal("1.5")


def slippage_cap_pct(symbol: str, chosen: Decimal | None) -> Decimal:
    """0.5 % for BTCUSDT/ETHUSDT, 1.5 % for the others; a follower may only lower it."""
    default = MAJOR_SLIPPAGE_PCT if symbol in MAJORS else OTHER_SLIPPAGE_PCT
    return default if chosen is None else min(default, chosen)


def slipped_too_far(side: Side, leader_price: Decimal, price: Decimal, cap_pct: Decimal) -> bool:
    """Whether `price` is worse for a `side` opener than the leader's fill by more than the cap
    (a better price is always taken)."""
    limit = leader_price * cap_pct / HUNDRED
    return price > leader_price + limit if side is Side.BUY else price < leader_price - limit


@dataclass(frozen=True, slots=True)
class Sizing:
    """What the mode needs to size an open."""

    mode: str
    amount: Decimal | None  # fixed_amount: margin per copied order
    multiplier: Decimal | None
    allocation_equity: Decimal  # allocation + net PnL of copied trades so far
    max_order_margin: Decimal | None


def open_quantity(
    sizing: Sizing,
    *,
    leader_quantity: Decimal,
    leader_price: Decimal,
    leader_leverage: int,
    leader_equity: Decimal,
    leverage: int,
    price: Decimal,
    step: Decimal,
) -> Decimal:
    """The follower's opening quantity (floored to the step; may come out below the minimum)."""
    if sizing.mode == "multiplier":
        assert sizing.multiplier is not None
        quantity = leader_quantity * sizing.multiplier
    elif sizing.mode == "fixed_amount":
        assert sizing.amount is not None
        quantity = sizing.amount * leverage / price
    else:  # fixed_ratio: the leader's share of equity put in, applied to the allocation
        leader_margin = leader_quantity * leader_price / leader_leverage
        share = leader_margin / leader_equity if leader_equity > ZERO else ZERO
        quantity = share * sizing.allocation_equity * leverage / price
    if sizing.max_order_margin is not None:
        quantity = min(quantity, sizing.max_order_margin * leverage / price)
    return floor_to_step(max(quantity, ZERO), step)


def close_quantity(follower_quantity: Decimal, fraction: Decimal, step: Decimal) -> Decimal:
    """The part of the follower's position to close when the leader closed `fraction` of theirs:
    all of it when the leader closed all."""
    if fraction >= 1:
        return abs(follower_quantity)
    return floor_to_step(abs(follower_quantity) * fraction, step)


@dataclass(frozen=True, slots=True)
class Share:
    fee: Decimal
    hwm_after: Decimal


def revenue_share(net_pnl: Decimal, hwm: Decimal, pct: Decimal, payable: Decimal) -> Share:
    """fee = max(0, net PnL − HWM) × pct, at 6 decimals (rounded down), at most `payable`; the
    HWM rises to the net PnL when it is a new high, else stays."""
    gain = net_pnl - hwm
    if gain <= ZERO:
        return Share(ZERO, hwm)
    fee = usdt6((gain * pct / HUNDRED).quantize(Decimal("0.000001"), rounding=ROUND_DOWN))
    return Share(min(fee, max(payable, ZERO)), net_pnl)


def smallest_order(instrument: Instrument, price: Decimal) -> Decimal:
    """The smallest quantity the instrument takes at `price`: its minimum quantity and enough
    for its minimum notional, on the step grid."""
    quantity = instrument.min_qty
    if instrument.min_notional > ZERO and price > ZERO:
        needed = instrument.min_notional / price
        steps = (needed / instrument.step_size).to_integral_value(rounding=ROUND_UP)
        quantity = max(quantity, steps * instrument.step_size)
    return quantity
