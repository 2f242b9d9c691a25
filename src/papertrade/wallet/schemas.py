"""Bodies of /v1/user/wallet."""

from decimal import Decimal
from typing import Literal

from pydantic import Field

from papertrade.kit.ids import Id
from papertrade.kit.schemas import Money, Schema, StrictInput


class WalletRead(Schema):
    balance: Money
    ledger_balance: Money = Field(description="The balance recomputed from the wallet's ledger.")


class WalletEntryRead(Schema):
    id: int
    kind: str
    amount: Money
    balance_after: Money
    portfolio_id: int | None
    reference: str | None
    actor: str
    note: str
    created_at: int


class TransferCreate(StrictInput):
    direction: Literal["to_portfolio", "from_portfolio"] = Field(
        description="`to_portfolio` only: `from_portfolio` is refused with 400 "
        "portfolio_money_is_paper (portfolio money is paper and never becomes wallet money)."
    )
    portfolio_id: Id
    amount: Decimal = Field(gt=0, le=Decimal(100_000_000), decimal_places=6, examples=[100])


class TransferRead(Schema):
    wallet_balance: Money
    portfolio_balance: Money
