"""The realism kernel: square-root slippage, the taker's price on the tick, depth-capped maker
fills, and the default profile that changes nothing."""

from decimal import Decimal

from papertrade.trading import realism
from papertrade.trading.enums import Side
from papertrade.trading.realism import Realism

D = Decimal


def test_the_mark_profile_fills_at_the_mark_and_in_full() -> None:
    taker = realism.taker_price(Realism.MARK, Side.BUY, D(60000), D(100), D("0.1"), D(10**6))
    assert taker == realism.TakerPrice(D(60000), D(0))
    assert realism.maker_quantity(Realism.MARK, D(500), D(60000), D("0.001"), D(1)) == D(500)


def test_slippage_grows_with_the_square_root_of_size() -> None:
    depth = D(1_000_000)
    assert realism.slippage_bps(depth, depth) == D(10)
    assert realism.slippage_bps(depth / 4, depth) == D(5)
    assert realism.slippage_bps(depth / 100, depth) == D(1)
    assert realism.slippage_bps(depth * 10**6, depth) == realism.MAX_SLIPPAGE_BPS
    assert realism.slippage_bps(D(0), depth) == D(0)


def test_a_taker_pays_the_slippage_on_the_tick_against_itself() -> None:
    # 2,500,000 USDT of BTC against a 2,500,000 USDT... depth: 10 bps of 50,000 = 50.
    depth = D(2_500_000)
    buy = realism.taker_price(Realism.REALISTIC, Side.BUY, D(50000), D(50), D("0.1"), depth)
    sell = realism.taker_price(Realism.REALISTIC, Side.SELL, D(50000), D(50), D("0.1"), depth)
    assert buy == realism.TakerPrice(D("50050.0"), D("10.00"))
    assert sell == realism.TakerPrice(D("49950.0"), D("10.00"))
    # Off the tick: a buy rounds up, a sell down (never better than the model).
    small = realism.taker_price(Realism.REALISTIC, Side.BUY, D(50000), D(1), D("0.1"), depth)
    assert small.price == D("50007.1") and small.slippage_bps == D("1.42")


def test_a_marketable_limit_never_fills_past_its_price() -> None:
    depth = D(2_500_000)
    capped = realism.taker_price(
        Realism.REALISTIC, Side.BUY, D(50000), D(50), D("0.1"), depth, limit=D(50020)
    )
    assert capped == realism.TakerPrice(D(50020), D("4.00"))


def test_a_resting_order_fills_the_modelled_depth_per_crossing() -> None:
    filled = realism.maker_quantity(Realism.REALISTIC, D(40), D(59000), D("0.001"), D(2_000_000))
    assert filled == D("33.898")  # 2,000,000 / 59,000 on the step
    assert realism.maker_quantity(Realism.REALISTIC, D(1), D(59000), D("0.001"), D(10**6)) == 1
    # However thin the book, a crossing fills at least one step.
    assert realism.maker_quantity(Realism.REALISTIC, D(5), D(100), D(1), D(1)) == D(1)


def test_depth_is_per_symbol_with_a_default() -> None:
    assert realism.depth_usdt("BTCUSDT") == D(2_000_000)
    assert realism.depth_usdt("NOSUCHUSDT") == realism.DEFAULT_DEPTH_USDT
