"""Bodies of /v1/recharge."""

from decimal import Decimal

from pydantic import Field

from papertrade.kit.schemas import Money, Schema, StrictInput


class RechargeCreate(StrictInput):
    amount: Decimal = Field(
        ge=1,
        le=Decimal(1_000_000),
        decimal_places=2,
        examples=[100],
        description="USDT to add to the wallet, at least 1 (two decimals at most).",
    )


class RechargeRead(Schema):
    id: int
    amount: Money
    pay_amount: Money = Field(description="Send exactly this much USDT (TRC20), no more, no less.")
    address: str
    network: str = "TRON (TRC20)"
    status: str = Field(description="pending, paid, expired, cancelled or paid_late")
    created_at: int
    expires_at: int
    paid_at: int | None
    tx_id: str | None
