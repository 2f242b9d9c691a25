"""Exact decimal helpers shared by every layer."""

from decimal import ROUND_DOWN, ROUND_HALF_EVEN, Decimal, InvalidOperation

ZERO = Decimal(0)
ONE = Decimal(1)
USDT_PLACES = Decimal("0.000001")  # the spec's 6 decimals for native USDT amounts
STORE_PLACES = Decimal("0.00000001")  # what the database keeps (scale 10^8)


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
    """Round a USDT amount to the 6 decimals the native API shows."""
    return value.quantize(USDT_PLACES, rounding=ROUND_HALF_EVEN)
