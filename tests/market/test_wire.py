"""Quotes and instruments survive the trip through Redis exactly (scale-out market data)."""

from decimal import Decimal

from papertrade.market import wire
from papertrade.market.catalogue import catalogue
from papertrade.trading.values import Quote


def test_the_catalogue_round_trips() -> None:
    known = catalogue()
    encoded = wire.encode_instruments(known)
    assert wire.decode_instruments(encoded) == known
    assert wire.encode_instruments(dict(reversed(known.items()))) == encoded  # order-independent


def test_a_quote_round_trips_with_every_digit() -> None:
    quote = Quote(
        symbol="1000PEPEUSDT",
        mark_price=Decimal("0.0123456"),
        last_price=Decimal("0.0123450"),
        index_price=Decimal("0.0123461"),
        funding_rate=Decimal("-0.00012345"),
        next_funding_time=1_735_718_400_000,
        time=1_735_690_000_123,
    )
    again = wire.decode_quote(wire.encode_quote(quote))
    assert again == quote and str(again.last_price) == "0.0123450"
