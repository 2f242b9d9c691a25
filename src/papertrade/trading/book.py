"""Resting limit orders of a paper book, kept in price-time priority.

Orders here never match each other: every paper order fills against the market feed's price,
not against another user. A bid above an ask is therefore legal (best bid < best ask is *not*
an invariant) and `crossed(price)` simply reports every order that price reaches.

Layout per side: a SortedList of distinct prices plus a dict price -> level, where a level is an
insertion-ordered dict order_id -> order kept in (seq, order_id) order. The best price is the
first or last element of the SortedList, so a tick that crosses nothing costs two comparisons
whatever the book size; add and remove are O(log levels).
"""

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from decimal import Decimal

from sortedcontainers import SortedList

from papertrade.trading.enums import Side

_Level = dict[int, "RestingOrder"]


@dataclass(frozen=True, slots=True)
class RestingOrder:
    """A resting limit order; `seq` gives time priority (lower rests longer)."""

    order_id: int
    portfolio_id: int
    side: Side
    price: Decimal
    quantity: Decimal  # remaining quantity
    seq: int


def _insert(level: _Level, order: RestingOrder) -> None:
    # Orders normally arrive in seq order, so appending keeps the level sorted; a late arrival
    # (e.g. a restore from storage out of order) re-sorts this one level.
    if level:
        last = next(reversed(level.values()))
        if (order.seq, order.order_id) < (last.seq, last.order_id):
            ordered = sorted([*level.values(), order], key=lambda o: (o.seq, o.order_id))
            level.clear()
            level.update((o.order_id, o) for o in ordered)
            return
    level[order.order_id] = order


class OrderBook:
    """Resting limit orders of one symbol in price-time priority."""

    __slots__ = ("_ask_levels", "_ask_prices", "_bid_levels", "_bid_prices", "_orders", "symbol")

    def __init__(self, symbol: str = "") -> None:
        self.symbol = symbol
        self._orders: dict[int, RestingOrder] = {}
        self._bid_prices = SortedList()  # ascending; best bid is the last element
        self._bid_levels: dict[Decimal, _Level] = {}
        self._ask_prices = SortedList()  # ascending; best ask is the first element
        self._ask_levels: dict[Decimal, _Level] = {}

    def _side(self, side: Side) -> tuple[SortedList, dict[Decimal, _Level]]:
        if side is Side.BUY:
            return self._bid_prices, self._bid_levels
        return self._ask_prices, self._ask_levels

    def add(self, order: RestingOrder) -> None:
        """Rest an order; ValueError if its id is already in the book."""
        if order.order_id in self._orders:
            raise ValueError(f"order {order.order_id} is already resting in {self.symbol}")
        prices, levels = self._side(order.side)
        level = levels.get(order.price)
        if level is None:
            levels[order.price] = {order.order_id: order}
            prices.add(order.price)
        else:
            _insert(level, order)
        self._orders[order.order_id] = order

    def remove(self, order_id: int) -> RestingOrder | None:
        """Take an order out of the book; None when it is not resting here."""
        order = self._orders.pop(order_id, None)
        if order is None:
            return None
        prices, levels = self._side(order.side)
        level = levels[order.price]
        del level[order_id]
        if not level:
            del levels[order.price]
            prices.remove(order.price)
        return order

    def crossed(self, price: Decimal) -> list[RestingOrder]:
        """Remove and return the buys with limit >= price, then the sells with limit <= price."""
        # Buys highest price first, sells lowest first, each price level by (seq, order_id).
        crossed: list[RestingOrder] = []
        bid_prices, ask_prices = self._bid_prices, self._ask_prices
        if bid_prices and bid_prices[-1] >= price:
            levels = self._bid_levels
            while bid_prices and bid_prices[-1] >= price:
                crossed.extend(levels.pop(bid_prices.pop(-1)).values())
        if ask_prices and ask_prices[0] <= price:
            levels = self._ask_levels
            while ask_prices and ask_prices[0] <= price:
                crossed.extend(levels.pop(ask_prices.pop(0)).values())
        orders = self._orders
        for order in crossed:
            del orders[order.order_id]
        return crossed

    def best_bid(self) -> Decimal | None:
        """Highest resting buy price, or None."""
        return self._bid_prices[-1] if self._bid_prices else None

    def best_ask(self) -> Decimal | None:
        """Lowest resting sell price, or None."""
        return self._ask_prices[0] if self._ask_prices else None

    def get(self, order_id: int) -> RestingOrder | None:
        """The resting order with this id, or None."""
        return self._orders.get(order_id)

    def bids(self) -> Iterator[RestingOrder]:
        """Resting buys in priority order (highest price, then lowest seq)."""
        for price in reversed(self._bid_prices):
            yield from self._bid_levels[price].values()

    def asks(self) -> Iterator[RestingOrder]:
        """Resting sells in priority order (lowest price, then lowest seq)."""
        for price in self._ask_prices:
            yield from self._ask_levels[price].values()

    def __len__(self) -> int:
        return len(self._orders)

    def __contains__(self, order_id: object) -> bool:
        return order_id in self._orders

    def __repr__(self) -> str:
        return (
            f"OrderBook({self.symbol!r}, orders={len(self)}, "
            f"best_bid={self.best_bid()}, best_ask={self.best_ask()})"
        )


class Books(Mapping[str, OrderBook]):
    """Order books by symbol; a book is created on first add."""

    def __init__(self) -> None:
        self._books: dict[str, OrderBook] = {}

    def book(self, symbol: str) -> OrderBook:
        """The book of a symbol, created empty when missing."""
        book = self._books.get(symbol)
        if book is None:
            book = self._books[symbol] = OrderBook(symbol)
        return book

    def add(self, symbol: str, order: RestingOrder) -> None:
        """Rest an order in the symbol's book."""
        self.book(symbol).add(order)

    def remove(self, symbol: str, order_id: int) -> RestingOrder | None:
        """Take an order out of the symbol's book; None when it is not resting there."""
        book = self._books.get(symbol)
        return None if book is None else book.remove(order_id)

    def crossed(self, symbol: str, price: Decimal) -> list[RestingOrder]:
        """Remove and return the symbol's orders that `price` reaches (see OrderBook.crossed)."""
        book = self._books.get(symbol)
        return [] if book is None else book.crossed(price)

    def __getitem__(self, symbol: str) -> OrderBook:
        return self._books[symbol]

    def __iter__(self) -> Iterator[str]:
        return iter(self._books)

    def __len__(self) -> int:
        return len(self._books)
