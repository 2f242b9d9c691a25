"""docs/social.md's worked examples of the sizing modes and the slippage cap, number for number,
through the rules the mirror uses (the API tests named in the docs follow real fills)."""

from decimal import Decimal
from pathlib import Path

from papertrade.copytrading import rules
from papertrade.market.catalogue import catalogue
from papertrade.trading.enums import Side

BTC = catalogue()["BTCUSDT"]
PRICE = Decimal(50000)
DOCS = Path(__file__).parents[2] / "docs"


def test_the_docs_show_these_numbers() -> None:
    text = " ".join((DOCS / "social.md").read_text().split())  # one line: wrapping aside
    for shown in (
        "so the order put **2.5 %** of it in",
        "50 × 10 ÷ 50,000 = **0.01 BTC**",
        "2.5 % × 1,800 × 10 ÷ 50,000 = 0.009 BTC",
        "0.003 × 2 = **0.006 BTC**",
        "0.0015, floored to **0.001**, below the 0.002 minimum: raised to **0.002**",
        "any price up to **50,250** and skipped (`slippage`) at 50,251",
        "placed down to 49,750",
        "a buy copy is placed up to 101.5",
    ):
        assert shown in text, shown


def sizing(mode: str, **values: Decimal) -> rules.Sizing:
    return rules.Sizing(
        mode=mode,
        amount=values.get("amount"),
        multiplier=values.get("multiplier"),
        allocation_equity=values.get("allocation_equity", Decimal(2000)),
        max_order_margin=None,
    )


def sized(mode: str, leader_quantity: str, leverage: int = 10, **values: Decimal) -> Decimal:
    """The follower's quantity when the leader (20x, balance 10,000 after the fee) fills
    `leader_quantity` BTC at 50,000 and the follower's price is the same."""
    return rules.open_quantity(
        sizing(mode, **values),
        leader_quantity=Decimal(leader_quantity),
        leader_price=PRICE,
        leader_leverage=20,
        leader_equity=Decimal(10000),
        leverage=leverage,
        price=PRICE,
        step=BTC.step_size,
    )


def test_the_sizing_examples() -> None:
    # The market the examples assume: steps of 0.001, at least 0.002 BTC at 50,000.
    assert BTC.step_size == Decimal("0.001")
    assert rules.smallest_order(BTC, PRICE) == Decimal("0.002")
    # fixed_ratio: 250 of margin on a 10,000 balance is 2.5 %; 2.5 % × 2,000 × 10 ÷ 50,000.
    assert sized("fixed_ratio", "0.1") == Decimal("0.01")
    # … and on 1,800 of allocation equity after copied trades netting −200.
    assert sized("fixed_ratio", "0.1", allocation_equity=Decimal(1800)) == Decimal("0.009")
    # multiplier 2: 0.003 × 2; multiplier 0.5: 0.0015 floored to 0.001, below the minimum.
    assert sized("multiplier", "0.003", multiplier=Decimal(2)) == Decimal("0.006")
    half = sized("multiplier", "0.003", multiplier=Decimal("0.5"))
    assert half == Decimal("0.001") < rules.smallest_order(BTC, PRICE)
    # fixed_amount 100 at 10x: 0.02 BTC whatever the leader's size.
    for leader_quantity in ("0.001", "0.1", "3"):
        assert sized("fixed_amount", leader_quantity, amount=Decimal(100)) == Decimal("0.02")


def test_the_slippage_cap_example() -> None:
    cap = rules.slippage_cap_pct("BTCUSDT", None)
    assert cap == Decimal("0.5")
    leader = Decimal(50000)
    assert not rules.slipped_too_far(Side.BUY, leader, Decimal(50250), cap)  # placed
    assert rules.slipped_too_far(Side.BUY, leader, Decimal(50251), cap)  # skipped: slippage
    assert not rules.slipped_too_far(Side.BUY, leader, Decimal(49000), cap)  # better: taken
    assert not rules.slipped_too_far(Side.SELL, leader, Decimal(49750), cap)
    assert rules.slipped_too_far(Side.SELL, leader, Decimal("49749.9"), cap)
    lowered = rules.slippage_cap_pct("BTCUSDT", Decimal("0.1"))
    assert lowered == Decimal("0.1")
    assert rules.slipped_too_far(Side.BUY, leader, Decimal(50100), lowered)
    assert rules.slippage_cap_pct("BTCUSDT", Decimal(3)) == cap  # may only lower it
    sol = rules.slippage_cap_pct("SOLUSDT", None)
    assert sol == Decimal("1.5")
    assert not rules.slipped_too_far(Side.BUY, Decimal(100), Decimal("101.5"), sol)
    assert rules.slipped_too_far(Side.BUY, Decimal(100), Decimal("101.6"), sol)
