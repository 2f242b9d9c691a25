"""The engine's watch over waiting conditional orders: which ones a tick triggers.

Fixed triggers sit in the same sorted books as resting limit orders (trading/book.py), one set
of books per watched price (mark, last): a trigger that fires when the price falls to it is kept
as a "buy" at its level (the book's crossing takes buys at or above the price) and one that fires
when the price rises as a "sell". A tick that triggers nothing therefore costs two comparisons
per watched price, whatever the number of waiting orders.

Trailing stops move their trigger with the price, so each tick walks the symbol's trailing stops
(their count, not the fixed triggers', sets that cost). Their best price since activation is
kept here and saved by the engine as it moves (`moved`), so a restart resumes from it.

`priceProtect` (Binance's trigger protection): an order that asks for it is not triggered while
the mark and the last price differ by more than PRICE_PROTECT_RATIO of the mark (exchangeInfo's
`triggerProtect`); it keeps waiting. Checked only for what a tick reaches, so the cost of a tick
that triggers nothing is unchanged.
"""

import itertools
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from papertrade.conditional.service import watched_price
from papertrade.trading import conditional as rules
from papertrade.trading.book import Books, OrderBook, RestingOrder
from papertrade.trading.conditional import ConditionalType, Direction, WorkingType
from papertrade.trading.enums import Side
from papertrade.trading.values import Quote

PRICE_PROTECT_RATIO = Decimal("0.05")


def prices_diverge(quote: Quote) -> bool:
    """Whether mark and last price are further apart than trigger protection allows."""
    mark = quote.mark_price
    return mark > 0 and abs(mark - quote.last_price) > mark * PRICE_PROTECT_RATIO


@dataclass(slots=True)
class Trailing:
    conditional_id: int
    side: Side
    working_type: str
    callback_rate: Decimal
    activation_price: Decimal | None
    extreme: Decimal | None = None  # best price since activation; None until activated
    saved: Decimal | None = None  # the extreme as last saved

    def follow(self, price: Decimal) -> Decimal | None:
        """Move with `price`; the level reached when this tick triggers the stop, else None."""
        if self.extreme is None:
            activation = self.activation_price
            if activation is not None and not rules.reached(
                Direction.RISE if self.side is Side.SELL else Direction.FALL, activation, price
            ):
                return None
            self.extreme = price
        if self.side is Side.SELL:
            self.extreme = max(self.extreme, price)
        else:
            self.extreme = min(self.extreme, price)
        level = rules.trailing_level(self.side, self.extreme, self.callback_rate)
        way = Direction.FALL if self.side is Side.SELL else Direction.RISE
        return level if rules.reached(way, level, price) else None


class TriggerWatch:
    """Waiting conditional orders by symbol: fixed triggers in sorted books, trailing aside."""

    def __init__(self) -> None:
        self.books = {
            WorkingType.MARK_PRICE.value: Books(),
            WorkingType.CONTRACT_PRICE.value: Books(),
        }
        self.trailing: dict[str, dict[int, Trailing]] = {}
        # Reduce-only ones (TP/SL) by position: a position that closes cancels them.
        self.closing: dict[tuple[int, str], set[int]] = {}
        # symbol → (watches the mark?, working type, its book): what a tick walks, no lookups.
        self._by_symbol: dict[str, list[tuple[bool, str, OrderBook]]] = {}
        self._seq = itertools.count()
        self.protected: set[int] = set()  # ids that asked for priceProtect

    def __contains__(self, conditional_id: object) -> bool:
        return any(
            conditional_id in book for books in self.books.values() for book in books.values()
        ) or any(conditional_id in stops for stops in self.trailing.values())

    def watch(self, data: Mapping[str, Any]) -> None:
        """Watch a waiting conditional order (its row or event data)."""
        conditional_id = int(data["id"])
        symbol = str(data["symbol"])
        side = Side(data["side"])
        kind = ConditionalType(data["type"])
        if data.get("price_protect"):
            self.protected.add(conditional_id)
        if data["reduce_only"]:
            self.closing.setdefault((int(data["portfolio_id"]), symbol), set()).add(conditional_id)
        if kind.is_trailing:
            extreme = data.get("trailing_extreme")
            self.trailing.setdefault(symbol, {})[conditional_id] = Trailing(
                conditional_id,
                side,
                str(data["working_type"]),
                Decimal(data["callback_rate"]),
                Decimal(data["activation_price"]) if data["activation_price"] is not None else None,
                extreme=Decimal(extreme) if extreme is not None else None,
                saved=Decimal(extreme) if extreme is not None else None,
            )
            return
        level = Decimal(data["trigger_price"])
        way = rules.direction(kind, side)
        # "buy" = fires when the price falls to the level; "sell" = when it rises to it.
        book_side = Side.BUY if way is Direction.FALL else Side.SELL
        working_type = str(data["working_type"])
        book = self.books[working_type].book(symbol)
        books = self._by_symbol.setdefault(symbol, [])
        if not any(known is book for _, _, known in books):
            books.append((working_type == WorkingType.MARK_PRICE.value, working_type, book))
        if conditional_id not in book:
            book.add(
                RestingOrder(
                    conditional_id,
                    int(data["portfolio_id"]),
                    book_side,
                    level,
                    Decimal(0),
                    next(self._seq),
                )
            )

    def closes(self, portfolio_id: int, symbol: str) -> bool:
        """Whether TP/SL wait to close this position."""
        return bool(self.closing.get((portfolio_id, symbol)))

    def unwatch(self, symbol: str, conditional_id: int, portfolio_id: int | None = None) -> None:
        if portfolio_id is not None:
            waiting = self.closing.get((portfolio_id, symbol))
            if waiting is not None:
                waiting.discard(conditional_id)
                if not waiting:
                    del self.closing[(portfolio_id, symbol)]
        self.protected.discard(conditional_id)
        for books in self.books.values():
            books.remove(symbol, conditional_id)
        stops = self.trailing.get(symbol)
        if stops is not None:
            stops.pop(conditional_id, None)

    def retain(self, open_ids: set[int]) -> None:
        """Stop watching what is no longer waiting (closed by another process)."""
        for books in self.books.values():
            for symbol, book in books.items():
                stale = [
                    r.order_id for r in [*book.bids(), *book.asks()] if r.order_id not in open_ids
                ]
                for conditional_id in stale:
                    books.remove(symbol, conditional_id)
        for stops in self.trailing.values():
            for conditional_id in [i for i in stops if i not in open_ids]:
                del stops[conditional_id]
        self.protected &= open_ids

    def moved(self) -> dict[int, Decimal]:
        """Trailing stops whose best price moved since last asked, with that price (to save)."""
        changed = {}
        for stops in self.trailing.values():
            for stop in stops.values():
                if stop.extreme is not None and stop.extreme != stop.saved:
                    changed[stop.conditional_id] = stop.saved = stop.extreme
        return changed

    def reached(self, quote: Quote) -> "Fired | None":
        """Take out and return what this quote triggers (None: nothing, the common case)."""
        fired = None
        for on_mark, working_type, book in self._by_symbol.get(quote.symbol, ()):
            crossed = book.crossed(quote.mark_price if on_mark else quote.last_price)
            if crossed:
                fired = fired or Fired(quote.symbol)
                fired.fixed.extend((working_type, r) for r in crossed)
        stops = self.trailing.get(quote.symbol)
        if stops:
            for stop in stops.values():
                level = stop.follow(watched_price(stop.working_type, quote))
                if level is not None:
                    fired = fired or Fired(quote.symbol)
                    fired.trailing.append((stop, level))
            if fired is not None:
                for stop, _ in fired.trailing:
                    del stops[stop.conditional_id]
        if fired is not None and self.protected and prices_diverge(quote):
            fired = self._hold_protected(fired)
        return fired

    def _hold_protected(self, fired: "Fired") -> "Fired | None":
        """Put back what asked for price protection while mark and last diverge."""
        held = Fired(fired.symbol)
        held.fixed = [(w, r) for w, r in fired.fixed if r.order_id in self.protected]
        held.trailing = [(s, lv) for s, lv in fired.trailing if s.conditional_id in self.protected]
        if not held:
            return fired
        self.put_back(held)
        fired.fixed = [(w, r) for w, r in fired.fixed if r.order_id not in self.protected]
        fired.trailing = [
            (s, lv) for s, lv in fired.trailing if s.conditional_id not in self.protected
        ]
        return fired or None

    def put_back(self, fired: "Fired") -> None:
        """Watch again what a failed unit of work could not trigger."""
        for working_type, resting in fired.fixed:
            self.books[working_type].add(fired.symbol, resting)
        stops = self.trailing.setdefault(fired.symbol, {})
        for stop, _ in fired.trailing:
            stops[stop.conditional_id] = stop


@dataclass(slots=True)
class Fired:
    """What one tick triggered in one symbol."""

    symbol: str
    fixed: list[tuple[str, RestingOrder]] = field(default_factory=list)
    trailing: list[tuple[Trailing, Decimal]] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.fixed or self.trailing)

    @property
    def ids(self) -> list[int]:
        return [r.order_id for _, r in self.fixed] + [s.conditional_id for s, _ in self.trailing]

    @property
    def levels(self) -> dict[int, Decimal]:
        return {stop.conditional_id: level for stop, level in self.trailing}
