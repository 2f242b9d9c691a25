"""Numbers in notifications as the web app shows them (js/format.js): USDT amounts with thousand
separators and 2 decimals, prices at their instrument's precision, quantities grouped."""

from decimal import ROUND_HALF_EVEN, Decimal
from typing import Any

from papertrade.kit.decimals import plain
from papertrade.market.catalogue import get_instrument

CENT = Decimal("0.01")


def _decimal(value: Any) -> Decimal | None:
    if value is None:
        return None
    try:
        number = Decimal(str(value))
    except ArithmeticError:
        return None
    return number if number.is_finite() else None


def _grouped(text: str) -> str:
    """`text` (a plain decimal) with thousand separators in its whole part."""
    sign, body = ("-", text[1:]) if text.startswith("-") else ("", text)
    whole, _, fraction = body.partition(".")
    grouped = f"{int(whole):,}"
    return f"{sign}{grouped}.{fraction}" if fraction else f"{sign}{grouped}"


def usdt(value: Any) -> str:
    """A USDT amount: "1,234.57", "0.05" (2 decimals, as the app shows money)."""
    number = _decimal(value)
    if number is None:
        return "?"
    text = format(number.quantize(CENT, rounding=ROUND_HALF_EVEN), "f")
    return _grouped("0.00" if text == "-0.00" else text)


def signed_usdt(value: Any) -> str:
    """A PnL: "+1,234.57", "-3.10", "0.00"."""
    text = usdt(value)
    number = _decimal(value)
    return f"+{text}" if number is not None and text != "0.00" and number > 0 else text


def price(symbol: Any, value: Any) -> str:
    """A price at the instrument's precision ("3,302.09", "0.08950"); grouped and trimmed when
    the instrument is not known."""
    number = _decimal(value)
    if number is None:
        return "?"
    instrument = get_instrument(str(symbol or ""))
    if instrument is None:
        return _grouped(plain(number))
    # The tick's decimals, as the app's pages show prices (js/instruments.js): 0.10 → 1.
    exponent = instrument.tick_size.normalize().as_tuple().exponent
    places = Decimal(1).scaleb(min(0, exponent) if isinstance(exponent, int) else 0)
    return _grouped(format(number.quantize(places, rounding=ROUND_HALF_EVEN), "f"))


def quantity(value: Any) -> str:
    """A quantity as it is, grouped ("1,000", "0.002")."""
    number = _decimal(value)
    return "?" if number is None else _grouped(plain(number))


def percent(value: Any) -> str:
    """A percentage with its sign and 2 decimals ("+2.00")."""
    number = _decimal(value)
    if number is None:
        return "?"
    text = format(number.quantize(CENT, rounding=ROUND_HALF_EVEN), "f")
    return text if text.startswith("-") else f"+{text}"
