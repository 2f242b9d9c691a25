"""The kill switch: stop mirroring, cancel every open order on the exchange and, if asked,
close every position at market; a report per account.

It talks to the exchanges directly from the caller (the request, or the send job that tripped
a limit), all accounts at once, and needs nothing but the database and the exchange: not the
job queue, not the outbox. Accounts are marked stopped first, in one short transaction, so no
mirrored order is sent after the switch (a send already in flight can still land: the cancel
of open orders follows it, and the report says what the exchange had).
"""

import asyncio
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select, update

from papertrade.context import AppContext
from papertrade.kit.time import now_ms
from papertrade.live import clients, exchange
from papertrade.models import LiveAccount, LiveOrder

PER_ACCOUNT_TIMEOUT_S = 10.0


@dataclass
class KillReport:
    account_id: int
    cancelled_symbols: list[str] = field(default_factory=list)
    closed_symbols: list[str] = field(default_factory=list)
    error: str | None = None


async def kill(
    ctx: AppContext,
    user_id: int,
    account_ids: list[int] | None,
    *,
    close_positions: bool,
    reason: str,
) -> list[KillReport]:
    async with ctx.transaction() as uow:
        query = select(LiveAccount).where(LiveAccount.user_id == user_id)
        if account_ids is not None:
            query = query.where(LiveAccount.id.in_(account_ids))
        accounts = (await uow.session.scalars(query.order_by(LiveAccount.id))).all()
        now = now_ms()
        for account in accounts:
            account.status, account.kill_reason, account.killed_at = "killed", reason[:200], now
        if accounts:
            await uow.session.execute(
                update(LiveOrder)
                .where(
                    LiveOrder.live_account_id.in_([a.id for a in accounts]),
                    LiveOrder.status == "queued",
                )
                .values(status="skipped", answer="stopped by the kill switch", updated_at=now)
            )
        keys = [(a.id, a.api_key, ctx.cipher.decrypt(a.api_secret_encrypted)) for a in accounts]
    opened = [(account_id, clients.client(ctx, key, secret)) for account_id, key, secret in keys]
    reports = list(
        await asyncio.gather(
            *(_stop(account_id, client, close_positions) for account_id, client in opened)
        )
    )
    flat = [r.account_id for r in reports if close_positions and r.error is None]
    if flat:  # every position closed: reconciliation counts intended orders from here
        async with ctx.transaction() as uow:
            await uow.session.execute(
                update(LiveAccount).where(LiveAccount.id.in_(flat)).values(baseline_at=now_ms())
            )
    return reports


async def _stop(account_id: int, client: Any, close_positions: bool) -> KillReport:
    report = KillReport(account_id)
    try:
        async with asyncio.timeout(PER_ACCOUNT_TIMEOUT_S):
            try:
                report.cancelled_symbols = await exchange.cancel_everything(client)
            except exchange.ExchangeError as exc:
                if not exchange.uncertain(exc):  # a refusal: the same call would be refused
                    raise
                # Dropped on the way (a kept connection the exchange had closed, a 5xx):
                # cancelling again is safe, and the second answer is the one reported.
                report.cancelled_symbols = await exchange.cancel_everything(client)
            if close_positions:
                report.closed_symbols = await exchange.close_everything(
                    client, f"pt-kill-{account_id}-{now_ms()}"
                )
    except (TimeoutError, exchange.ExchangeError) as exc:
        report.error = f"{type(exc).__name__}: {exchange.said(exc)}"[:300]
    return report
