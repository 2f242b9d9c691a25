"""Real money into a wallet the way an operator credits a USDT transfer (`papertrade recharge
resolve --user`, kind operator_credit): for tests that need a funded wallet but not the watcher.
Portfolio money is paper and never moves into a wallet, so this is the test's way in."""

from decimal import Decimal

from fastapi import FastAPI

from papertrade.trading.enums import LedgerKind
from papertrade.wallet import service as wallets


async def operator_credit(app: FastAPI, user_id: int, amount: str | Decimal) -> None:
    async with app.state.ctx.transaction() as uow:
        await wallets.credit(
            uow,
            user_id,
            LedgerKind.OPERATOR_CREDIT,
            Decimal(amount),
            actor="operator:test",
            note="a test's recharge",
        )
