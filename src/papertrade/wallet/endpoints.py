"""/v1/user/wallet: balance, history (paged and as CSV) and transfers into own portfolios."""

import csv
import io
from typing import Annotated

from fastapi import APIRouter, Query
from fastapi.responses import Response

from papertrade.auth.v1 import Caller, Ctx, Writer
from papertrade.kit.decimals import ZERO, usdt6
from papertrade.kit.ids import Id
from papertrade.models import Portfolio
from papertrade.wallet import service
from papertrade.wallet.schemas import TransferCreate, TransferRead, WalletEntryRead, WalletRead

router = APIRouter(tags=["wallet"])
Limit = Annotated[int, Query(ge=1, le=1000)]
CSV_MAX_ROWS = 100_000
CSV_COLUMNS = (
    "id",
    "created_at",
    "kind",
    "amount",
    "balance_after",
    "portfolio_id",
    "reference",
    "actor",
    "note",
)


@router.get("/user/wallet", response_model=WalletRead)
async def wallet(principal: Caller, ctx: Ctx) -> WalletRead:
    """The caller's USDT credit (0 before the first recharge)."""
    async with ctx.db.reader() as session:
        found = await service.find(session, principal.user_id)
        if found is None:
            return WalletRead(balance=ZERO, ledger_balance=ZERO)
        return WalletRead(
            balance=found.balance, ledger_balance=await service.ledger_balance(session, found.id)
        )


@router.get("/user/wallet/ledger", response_model=list[WalletEntryRead])
async def wallet_ledger(
    principal: Caller, ctx: Ctx, before_id: Id | None = None, limit: Limit = 100
) -> list[WalletEntryRead]:
    """Every change of the wallet, newest first (page with before_id = the last id seen)."""
    async with ctx.db.reader() as session:
        rows = await service.history(session, principal.user_id, before_id=before_id, limit=limit)
        return [WalletEntryRead.model_validate(row) for row in rows]


@router.get("/user/wallet/ledger.csv", response_class=Response)
async def wallet_ledger_csv(principal: Caller, ctx: Ctx) -> Response:
    """The whole wallet history as CSV, oldest first, amounts with 6 decimals."""
    async with ctx.db.reader() as session:
        rows = await service.history(session, principal.user_id, before_id=None, limit=CSV_MAX_ROWS)
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(CSV_COLUMNS)
    for row in reversed(rows):
        writer.writerow(
            [
                row.id,
                row.created_at,
                row.kind,
                f"{usdt6(row.amount):f}",
                f"{usdt6(row.balance_after):f}",
                row.portfolio_id or "",
                row.reference or "",
                row.actor,
                row.note,
            ]
        )
    return Response(
        out.getvalue(),
        media_type="text/csv; charset=utf-8",
        headers={"Content-Disposition": 'attachment; filename="wallet.csv"'},
    )


@router.post("/user/wallet/transfers", response_model=TransferRead)
async def transfer(body: TransferCreate, principal: Writer, ctx: Ctx) -> TransferRead:
    """Move USDT from the wallet into one of the caller's portfolios (both ledgers, at once).
    One way only: portfolio money is paper, so `from_portfolio` is refused (400
    portfolio_money_is_paper); the move buys nothing a free top-up would not."""
    async with ctx.transaction() as uow:
        found = await service.transfer(
            uow,
            ctx.market,
            principal,
            body.portfolio_id,
            body.amount,
            to_portfolio=body.direction == "to_portfolio",
            enforce_tier=ctx.settings.tiers_enforced,
        )
        portfolio = await uow.session.get(Portfolio, body.portfolio_id)
        assert portfolio is not None
        return TransferRead(wallet_balance=found.balance, portfolio_balance=portfolio.balance)
