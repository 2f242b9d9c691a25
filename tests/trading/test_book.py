"""Order book: price-time priority, remove, crossed; a model-based property test."""

from decimal import Decimal

import pytest
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from papertrade.trading.book import Books, OrderBook, RestingOrder
from papertrade.trading.enums import Side

D = Decimal
BUY, SELL = Side.BUY, Side.SELL


def order(order_id: int, side: Side, price: str, seq: int | None = None) -> RestingOrder:
    return RestingOrder(order_id, 7, side, D(price), D(1), order_id if seq is None else seq)


def ids(orders: list[RestingOrder]) -> list[int]:
    return [o.order_id for o in orders]


@pytest.fixture
def book() -> OrderBook:
    book = OrderBook("BTCUSDT")
    for o in [
        order(1, BUY, "100"),
        order(2, BUY, "101"),
        order(3, BUY, "100"),
        order(4, BUY, "99"),
        order(5, SELL, "105"),
        order(6, SELL, "104"),
        order(7, SELL, "105"),
    ]:
        book.add(o)
    return book


def test_best_prices_and_size(book: OrderBook) -> None:
    assert (book.best_bid(), book.best_ask(), len(book)) == (D(101), D(104), 7)
    assert 3 in book and 8 not in book
    assert ids(list(book.bids())) == [2, 1, 3, 4]
    assert ids(list(book.asks())) == [6, 5, 7]


@pytest.mark.parametrize(
    ("price", "crossed", "bid", "ask"),
    [
        pytest.param("102", [], "101", "104", id="between-touches-crosses-nothing"),
        pytest.param("101", [2], "100", "104", id="equal-to-the-bid-crosses"),
        pytest.param("100", [2, 1, 3], "99", "104", id="buys-by-price-then-seq"),
        pytest.param("104", [6], "101", "105", id="equal-to-the-ask-crosses"),
        pytest.param("105", [6, 5, 7], "101", None, id="sells-by-price-then-seq"),
        pytest.param("50", [2, 1, 3, 4], None, "104", id="every-buy"),
    ],
)
def test_crossed(book: OrderBook, price: str, crossed: list[int], bid: str, ask: str) -> None:
    assert ids(book.crossed(D(price))) == crossed
    assert book.best_bid() == (None if bid is None else D(bid))
    assert book.best_ask() == (None if ask is None else D(ask))
    assert len(book) == 7 - len(crossed)
    assert not any(i in book for i in crossed)
    assert book.crossed(D(price)) == []  # nothing crosses twice


def test_remove(book: OrderBook) -> None:
    removed = book.remove(2)
    assert removed == order(2, BUY, "101")
    assert book.remove(2) is None
    assert book.remove(999) is None
    assert book.best_bid() == D(100)  # the emptied level is gone
    assert book.remove(1) is not None
    assert ids(book.crossed(D(100))) == [3]


def test_empty_book() -> None:
    book = OrderBook()
    assert (book.best_bid(), book.best_ask(), len(book)) == (None, None, 0)
    assert book.crossed(D(1)) == []
    assert "OrderBook" in repr(book)


def test_duplicate_id_is_refused(book: OrderBook) -> None:
    with pytest.raises(ValueError, match="already resting"):
        book.add(order(1, SELL, "200"))


def test_late_seq_takes_its_time_priority() -> None:
    book = OrderBook()
    book.add(order(1, SELL, "10", seq=50))
    book.add(order(2, SELL, "10", seq=60))
    book.add(order(3, SELL, "10", seq=55))  # restored late but older than order 2
    book.add(order(4, SELL, "10", seq=10))
    assert ids(list(book.asks())) == [4, 1, 3, 2]
    assert ids(book.crossed(D(10))) == [4, 1, 3, 2]


def test_equal_prices_in_different_notation_share_a_level() -> None:
    book = OrderBook()
    book.add(order(1, BUY, "100.00"))
    book.add(order(2, BUY, "100"))
    book.add(order(3, BUY, "100.0"))
    assert book.remove(1) is not None
    assert book.best_bid() == D(100)
    assert ids(book.crossed(D("100.000"))) == [2, 3]
    assert book.best_bid() is None


def test_a_paper_book_may_be_crossed() -> None:
    # Paper orders fill against the feed, never against each other, so bid > ask can rest.
    book = OrderBook()
    book.add(order(1, BUY, "110"))
    book.add(order(2, SELL, "90"))
    assert book.best_bid() == D(110) and book.best_ask() == D(90)
    assert ids(book.crossed(D(100))) == [1, 2]


def test_books_by_symbol() -> None:
    books = Books()
    books.add("BTCUSDT", order(1, BUY, "100"))
    books.add("ETHUSDT", order(2, BUY, "100"))
    assert set(books) == {"BTCUSDT", "ETHUSDT"} and len(books) == 2
    assert "BTCUSDT" in books and books["BTCUSDT"].symbol == "BTCUSDT"
    assert books.get("XRPUSDT") is None
    assert books.crossed("XRPUSDT", D(1)) == []
    assert books.remove("XRPUSDT", 1) is None
    assert books.remove("ETHUSDT", 1) is None  # wrong symbol
    assert ids(books.crossed("BTCUSDT", D(100))) == [1]
    assert books.remove("ETHUSDT", 2) == order(2, BUY, "100")
    assert books.book("ETHUSDT") is books["ETHUSDT"]


# Few distinct prices (some in two notations) so levels fill up and ties on price are common.
PRICES = ["98", "99", "99.0", "100", "100.00", "101", "102"]


class BookMachine(RuleBasedStateMachine):
    """Random adds, removes and ticks against a naive list model."""

    def __init__(self) -> None:
        super().__init__()
        self.book = OrderBook("X")
        self.model: dict[int, RestingOrder] = {}
        self.gone: set[int] = set()
        self.next_id = 1

    @rule(
        side=st.sampled_from(Side),
        price=st.sampled_from(PRICES),
        seq=st.one_of(st.none(), st.integers(0, 1000)),
    )
    def add(self, side: Side, price: str, seq: int | None) -> None:
        # Mostly increasing seq (normal arrival), sometimes arbitrary (restores, ties).
        new = RestingOrder(
            self.next_id, 1, side, D(price), D(1), self.next_id * 10 if seq is None else seq
        )
        self.next_id += 1
        self.book.add(new)
        self.model[new.order_id] = new

    @precondition(lambda self: self.model)
    @rule(data=st.data())
    def remove_resting(self, data: st.DataObject) -> None:
        order_id = data.draw(st.sampled_from(sorted(self.model)))
        assert self.book.remove(order_id) == self.model.pop(order_id)
        self.gone.add(order_id)

    @rule(order_id=st.integers(0, 200))
    def remove_any(self, order_id: int) -> None:
        expected = self.model.pop(order_id, None)
        assert self.book.remove(order_id) == expected
        if expected is not None:
            self.gone.add(order_id)

    @rule(price=st.sampled_from([*PRICES, "97", "103", "99.5"]))
    def tick(self, price: str) -> None:
        p = D(price)
        buys = sorted(
            (o for o in self.model.values() if o.side is BUY and o.price >= p),
            key=lambda o: (-o.price, o.seq, o.order_id),
        )
        sells = sorted(
            (o for o in self.model.values() if o.side is SELL and o.price <= p),
            key=lambda o: (o.price, o.seq, o.order_id),
        )
        crossed = self.book.crossed(p)
        assert crossed == buys + sells
        assert not self.gone.intersection(ids(crossed))  # never a removed or crossed order
        for o in crossed:
            del self.model[o.order_id]
            self.gone.add(o.order_id)

    @invariant()
    def matches_model(self) -> None:
        assert len(self.book) == len(self.model)
        bids = [o.price for o in self.model.values() if o.side is BUY]
        asks = [o.price for o in self.model.values() if o.side is SELL]
        assert self.book.best_bid() == (max(bids) if bids else None)
        assert self.book.best_ask() == (min(asks) if asks else None)
        assert sorted(ids([*self.book.bids(), *self.book.asks()])) == sorted(self.model)
        assert all(i not in self.book for i in self.gone)


TestBookMachine = BookMachine.TestCase
