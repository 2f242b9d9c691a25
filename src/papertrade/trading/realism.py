"""Realism profiles: how far a portfolio's fills depart from "fill at the mark".

Pure functions of the kernel: the order path (orders/service.py) and the engine's fills
(engine/engine.py) ask them for a taker's price and a resting order's share of the book.

The paper market has no order book, so depth is a model: each symbol has a figure `depth_usdt`,
the notional the book is taken to hold on each side within `IMPACT_AT_DEPTH_BPS` of the mark.

- A taker order (MARKET, or a LIMIT marketable when placed) walks the book: square-root impact,
  `slippage_bps = IMPACT_AT_DEPTH_BPS × sqrt(notional / depth_usdt)`, capped at `MAX_SLIPPAGE_BPS`.
  A buy pays the mark plus that, a sell gets the mark minus it, on the instrument's tick, rounded
  against the trader; a marketable LIMIT never fills past its limit price.
- A resting LIMIT order crossed by the mark fills at most `depth_usdt` of notional per crossing
  tick (the depth at its price); the rest keeps resting and fills on later ticks that still cross.
- Latency is declared (`latency_ms`) and recorded on each taker fill: the paper engine fills an
  order in the unit of work that accepts it, at the freshest mark it has, so no time passes and
  the figure does not move the price (nothing sleeps, nothing waits).
"""

from dataclasses import dataclass
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal
from enum import StrEnum

from papertrade.trading.enums import Side

BPS = Decimal(10_000)
IMPACT_AT_DEPTH_BPS = Decimal(10)  # an order the size of the modelled depth moves 10 bps
MAX_SLIPPAGE_BPS = Decimal(500)
# USDT on each side of the book within IMPACT_AT_DEPTH_BPS of the mark (orders of magnitude of
# Binance's USDT-M books; a symbol not listed gets the default, a thin alt-coin's book).
DEPTH_USDT: dict[str, Decimal] = {
    "BTCUSDT": Decimal(2_000_000),
    "ETHUSDT": Decimal(1_000_000),
    "SOLUSDT": Decimal(300_000),
    "BNBUSDT": Decimal(300_000),
    "XRPUSDT": Decimal(300_000),
}
DEFAULT_DEPTH_USDT = Decimal(100_000)


class Realism(StrEnum):
    """A portfolio's realism profile."""

    MARK = "mark"  # every fill at the mark (or the limit price), unlimited depth: the default
    REALISTIC = "realistic"  # slippage, partial fills of large limits, a declared latency


class PriceSource(StrEnum):
    """Where a fill's price came from."""

    MARK = "mark"  # the mark price (taker fills, liquidations)
    LIMIT = "limit"  # the order's limit price (a resting order the mark crossed)


LATENCY_MS = {Realism.MARK: 0, Realism.REALISTIC: 50}


@dataclass(frozen=True, slots=True)
class TakerPrice:
    price: Decimal
    slippage_bps: Decimal  # what the trader paid over the mark, in basis points (>= 0)


def depth_usdt(symbol: str) -> Decimal:
    return DEPTH_USDT.get(symbol, DEFAULT_DEPTH_USDT)


def slippage_bps(notional: Decimal, depth: Decimal) -> Decimal:
    """Square-root impact of taking `notional` USDT from a book of `depth` USDT."""
    if notional <= 0 or depth <= 0:
        return Decimal(0)
    return min(IMPACT_AT_DEPTH_BPS * (abs(notional) / depth).sqrt(), MAX_SLIPPAGE_BPS)


def taker_price(
    profile: Realism,
    side: Side,
    mark: Decimal,
    quantity: Decimal,
    tick: Decimal,
    depth: Decimal,
    limit: Decimal | None = None,
) -> TakerPrice:
    """The price a taker of `quantity` pays under `profile` (never past `limit`)."""
    if profile is Realism.MARK:
        return TakerPrice(mark, Decimal(0))
    bps = slippage_bps(quantity * mark, depth)
    moved = mark * (1 + side.sign * bps / BPS)
    # On the tick, against the trader: a buy rounds up, a sell down.
    rounding = ROUND_CEILING if side is Side.BUY else ROUND_FLOOR
    price = (moved / tick).to_integral_value(rounding=rounding) * tick
    if limit is not None:
        price = min(price, limit) if side is Side.BUY else max(price, limit)
    price = max(price, tick)
    return TakerPrice(price, applied_bps(side, mark, price))


def applied_bps(side: Side, mark: Decimal, price: Decimal) -> Decimal:
    """The slippage a fill at `price` carries against `mark`, in basis points (2 decimals)."""
    if mark <= 0:
        return Decimal(0)
    return (side.sign * (price - mark) / mark * BPS).quantize(Decimal("0.01"))


def maker_quantity(
    profile: Realism, remaining: Decimal, price: Decimal, step: Decimal, depth: Decimal
) -> Decimal:
    """How much of a resting order's `remaining` quantity one crossing tick fills at `price`:
    all of it at the mark profile; at most `depth` USDT (on the step, at least one step)."""
    if profile is Realism.MARK or price <= 0:
        return remaining
    available = (depth / price / step).to_integral_value(rounding=ROUND_FLOOR) * step
    return min(remaining, max(available, step))
