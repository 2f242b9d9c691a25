"""Enum values and the order status transition table."""

from enum import StrEnum

import pytest

from papertrade.trading.enums import (
    Action,
    LedgerKind,
    Liquidity,
    OrderStatus,
    OrderType,
    Side,
    TimeInForce,
    can_transition,
)

S = OrderStatus


@pytest.mark.parametrize(
    ("enum", "values"),
    [
        (Side, ["buy", "sell"]),
        (OrderType, ["market", "limit"]),
        (TimeInForce, ["GTC", "IOC", "FOK", "GTX"]),
        (S, ["new", "partially_filled", "filled", "canceled", "rejected", "expired"]),
        (Action, ["open", "close"]),
        (Liquidity, ["maker", "taker"]),
        (
            LedgerKind,
            [
                "deposit",
                "reset",
                "realized_pnl",
                "commission",
                "funding",
                "liquidation",
                "top_up",
                "wallet_transfer",
                "recharge",
                "tier_payment",
                "tier_refund",
                "operator_credit",
                "profit_share",
                "subscription",
                "isolated_margin",
                "paper_reversal",
            ],
        ),
    ],
)
def test_enum_values_are_the_wire_strings(enum: type[StrEnum], values: list[str]) -> None:
    assert [member.value for member in enum] == values
    assert all(enum(value) == value for value in values)


def test_side_sign_and_opposite() -> None:
    assert (Side.BUY.sign, Side.SELL.sign) == (1, -1)
    assert (Side.BUY.opposite, Side.SELL.opposite) == (Side.SELL, Side.BUY)


ALLOWED = {
    (S.NEW, S.PARTIALLY_FILLED),
    (S.NEW, S.FILLED),
    (S.NEW, S.CANCELED),
    (S.NEW, S.EXPIRED),
    (S.NEW, S.REJECTED),
    (S.PARTIALLY_FILLED, S.PARTIALLY_FILLED),
    (S.PARTIALLY_FILLED, S.FILLED),
    (S.PARTIALLY_FILLED, S.CANCELED),
    (S.PARTIALLY_FILLED, S.EXPIRED),
}


@pytest.mark.parametrize("old", list(S))
@pytest.mark.parametrize("new", list(S))
def test_transition_table(old: OrderStatus, new: OrderStatus) -> None:
    assert can_transition(old, new) is ((old, new) in ALLOWED)


@pytest.mark.parametrize("status", [S.FILLED, S.CANCELED, S.REJECTED, S.EXPIRED])
def test_terminal_states_never_move(status: OrderStatus) -> None:
    assert status.is_terminal
    assert not any(can_transition(status, new) for new in S)


def test_open_states_are_not_terminal() -> None:
    assert not S.NEW.is_terminal
    assert not S.PARTIALLY_FILLED.is_terminal
