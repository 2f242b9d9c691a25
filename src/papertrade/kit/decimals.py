"""Exact decimal helpers shared by every layer."""

from decimal import ROUND_DOWN, ROUND_HALF_EVEN, Context, Decimal, InvalidOperation

ZERO = Decimal(0)
ONE = Decimal(1)
USDT_PLACES = Decimal("0.000001")  # the spec's 6 decimals for native USDT amounts
STORE_PLACES = Decimal("0.00000001")  # what the database keeps (scale 10^8)
_WIDE = Context(prec=80)  # enough digits to rescale any stored amount without rounding


def D(value: str | int | Decimal) -> Decimal:
    """Build a Decimal from a string or int; floats are refused on purpose."""
    if isinstance(value, float):
        raise TypeError("floats are not accepted as money; pass a string")
    try:
        result = Decimal(value)
    except InvalidOperation as exc:
        raise ValueError(f"not a decimal number: {value!r}") from exc
    if not result.is_finite():
        raise ValueError(f"not a finite number: {value!r}")
    return result


def is_multiple(value: Decimal, step: Decimal) -> bool:
    """True when value lies exactly on the step grid (False when it is too large to tell)."""
    if step == ZERO:
        return True
    try:
        return value % step == ZERO
    except InvalidOperation:
        return False


def floor_to_step(value: Decimal, step: Decimal) -> Decimal:
    """Round toward zero onto the step grid (quantities)."""
    if step == ZERO:
        return value
    return (value / step).to_integral_value(rounding=ROUND_DOWN) * step


def money(value: Decimal) -> Decimal:
    """Round a USDT amount to the stored precision (banker's rounding)."""
    return value.quantize(STORE_PLACES, rounding=ROUND_HALF_EVEN)


def usdt6(value: Decimal) -> Decimal:
    """Round a USDT amount to the 6 decimals the native API shows (banker's rounding).

    Every ledger amount is booked through this when it is written, and the balance moves by
    exactly that amount, so the listed ledger always adds up to the balance.
    """
    return value.quantize(USDT_PLACES, rounding=ROUND_HALF_EVEN, context=_WIDE)


def to_tick(value: Decimal, tick: Decimal, rounding: str = ROUND_HALF_EVEN) -> Decimal:
    """`value` on the tick grid, written with the tick's decimals (`rounding` picks the side)."""
    if tick <= ZERO:
        return value
    steps = (value / tick).to_integral_value(rounding=rounding, context=_WIDE)
    exponent = tick.normalize(_WIDE).as_tuple().exponent
    places = min(0, exponent) if isinstance(exponent, int) else 0  # a tick of 10 keeps units
    return (steps * tick).quantize(ONE.scaleb(places), context=_WIDE)


def plain(value: Decimal) -> str:
    """A number as people read it: never exponent form, no trailing zeros ("0.000001", "100")."""
    if not value.is_finite():
        return str(value)
    text = format(value.normalize(_WIDE), "f")
    return "0" if text == "-0" else text


def money_text(value: Decimal) -> str:
    """A USDT amount for a message: rounded to 6 decimals, then trimmed ("252499.181334")."""
    return plain(usdt6(value))


def price_text(value: Decimal, tick: Decimal = ZERO) -> str:
    """A computed price (a mark) for a message, at the instrument's tick ("65000.1"); plain when
    the tick is not known."""
    return format(to_tick(value, tick), "f") if tick > ZERO else plain(value)
