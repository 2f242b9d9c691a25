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
    """The follower's quantity for a fresh copy of a leader position of `leader_quantity`
    (floored to the step; may come out below the minimum), capped by max_order_margin."""
    quantity = _fresh(
        sizing,
        leader_quantity=leader_quantity,
        leader_price=leader_price,
        leader_leverage=leader_leverage,
        leader_equity=leader_equity,
        leverage=leverage,
        price=price,
    )
    if sizing.max_order_margin is not None:
        quantity = min(quantity, sizing.max_order_margin * leverage / price)
    return floor_to_step(max(quantity, ZERO), step)


def _fresh(
    sizing: Sizing,
    *,
    leader_quantity: Decimal,
    leader_price: Decimal,
    leader_leverage: int,
    leader_equity: Decimal,
    leverage: int,
    price: Decimal,
) -> Decimal:
    if sizing.mode == "multiplier":
        assert sizing.multiplier is not None
        return leader_quantity * sizing.multiplier
    if sizing.mode == "fixed_amount":
        assert sizing.amount is not None
        return sizing.amount * leverage / price
    # fixed_ratio: the leader's share of equity put in, applied to the allocation
    leader_margin = leader_quantity * leader_price / leader_leverage
    share = leader_margin / leader_equity if leader_equity > ZERO else ZERO
    return share * sizing.allocation_equity * leverage / price


def _sign(value: Decimal) -> int:
    return (value > 0) - (value < 0)


def target_position(
    sizing: Sizing,
    *,
    leader_before: Decimal,
    leader_after: Decimal,
    held: Decimal,
    leader_price: Decimal,
    leader_leverage: int,
    leader_equity: Decimal,
    leverage: int,
    price: Decimal,
    step: Decimal,
) -> Decimal:
    """The follower's target position (signed, floored toward zero to the step) once the leader
    went from `leader_before` to `leader_after`, the follower holding `held` (docs/social.md):

    - the leader flat: flat;
    - `multiplier`: the leader's position × the multiplier, always;
    - `fixed_amount`, `fixed_ratio`: while the follower holds a copy on the side of the leader's
      position, which the leader held before too, that copy's own ratio (held ÷ the leader's
      position before) applied to the leader's new position, so adds and partial closes scale
      both alike; otherwise (a fresh copy: the follower flat or on the other side, or the
      leader opened or flipped) the mode's size for the leader's whole position.
    """
    side = _sign(leader_after)
    if side == 0:
        return ZERO
    size = abs(leader_after)
    if sizing.mode == "multiplier":
        assert sizing.multiplier is not None
        quantity = size * sizing.multiplier
    elif _sign(held) == side and _sign(leader_before) == side:
        quantity = abs(held) * size / abs(leader_before)
    else:
        quantity = _fresh(
            sizing,
            leader_quantity=size,
            leader_price=leader_price,
            leader_leverage=leader_leverage,
            leader_equity=leader_equity,
            leverage=leverage,
            price=price,
        )
    return side * floor_to_step(max(quantity, ZERO), step)


def capped_open(
    sizing: Sizing, quantity: Decimal, leverage: int, price: Decimal, step: Decimal
) -> Decimal:
    """An opening order's quantity under max_order_margin (floored to the step)."""
    if sizing.max_order_margin is None:
        return quantity
    return min(quantity, floor_to_step(sizing.max_order_margin * leverage / price, step))


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
