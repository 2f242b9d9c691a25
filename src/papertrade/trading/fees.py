"""Trading commission."""

from dataclasses import dataclass
from decimal import Decimal

from papertrade.trading.enums import Liquidity


@dataclass(frozen=True, slots=True)
class FeeSchedule:
    """Maker and taker commission rates (Binance USDT-M VIP 0 by default)."""

    maker_rate: Decimal = Decimal("0.0002")
    taker_rate: Decimal = Decimal("0.0005")

    def rate(self, liquidity: Liquidity) -> Decimal:
        """The rate that applies to a fill of the given liquidity."""
        return self.maker_rate if liquidity is Liquidity.MAKER else self.taker_rate

    def commission(self, notional_abs: Decimal, liquidity: Liquidity) -> Decimal:
        """Commission (a positive amount to debit) for a fill of this absolute notional."""
        # Exact product: the ledger rounds once, at the storage boundary, not here.
        return abs(notional_abs) * self.rate(liquidity)
