"""/v1/launch/tiers (the table, mine, change) and /v1/launch/ai-quota."""

from dataclasses import asdict

from fastapi import APIRouter

from papertrade.auth.v1 import Caller, Ctx, Writer
from papertrade.kit.decimals import ZERO
from papertrade.kit.time import now_ms
from papertrade.tiers import limits, quota, service
from papertrade.tiers.schemas import AiQuotaRead, MyTierRead, TierChange, TierRead
from papertrade.tiers.table import ORDER, TIERS
from papertrade.wallet import service as wallets

router = APIRouter(tags=["tiers"])


@router.get("/launch/tiers", response_model=list[TierRead])
async def tiers() -> list[TierRead]:
    """Every tier with its limits and its price per 30 days (public)."""
    return [TierRead(**asdict(TIERS[name])) for name in ORDER]


async def _mine(ctx: Ctx, user_id: int) -> MyTierRead:
    async with ctx.db.reader() as session:
        now = now_ms()
        found = await limits.membership(session, user_id)
        tier = limits.effective(found, now)
        wallet = await wallets.find(session, user_id)
    paid_until = found.paid_until if found is not None and tier.name != "free" else None
    balance = wallet.balance if wallet is not None else ZERO
    return MyTierRead(tier=tier.name, paid_until=paid_until, wallet_balance=balance)


@router.get("/launch/tiers/me", response_model=MyTierRead)
async def my_tier(principal: Caller, ctx: Ctx) -> MyTierRead:
    """The caller's tier in force and when its paid period ends."""
    return await _mine(ctx, principal.user_id)


@router.post("/launch/tiers/me", response_model=MyTierRead)
async def change_tier(body: TierChange, principal: Writer, ctx: Ctx) -> MyTierRead:
    """Pay for a tier from the wallet (30 days), renew it, or go back to free
    (docs/tiers.md: the unused part of a replaced period is refunded)."""
    async with ctx.transaction() as uow:
        await service.change(uow, principal.user_id, body.tier)
    return await _mine(ctx, principal.user_id)


@router.get("/launch/ai-quota", response_model=AiQuotaRead)
async def ai_quota(principal: Caller, ctx: Ctx) -> AiQuotaRead:
    """Today's AI messages: the tier's limit, used, remaining, and when the count resets."""
    async with ctx.db.reader() as session:
        found = await quota.status(session, principal.user_id, now_ms())
    return AiQuotaRead(
        limit=found.limit, used=found.used, remaining=found.remaining, resets_at=found.resets_at
    )


@router.post("/launch/ai-quota/consume", response_model=AiQuotaRead)
async def consume_ai_quota(principal: Writer, ctx: Ctx) -> AiQuotaRead:
    """Count one AI message against today's quota, as every AI feature does before answering
    (for an assistant outside this server); 429 ai_quota_exceeded with resets_at when none are
    left, or 429 rate_limited past 10 a minute."""
    async with ctx.db.reader() as session:  # the day's limit first: it is the one to tell
        today = await quota.status(session, principal.user_id, now_ms())
    if today.remaining == 0:
        raise quota.AiQuotaExceeded(today.limit, today.resets_at, now_ms())
    # The day's count first, then the burst, in one unit of work: requests racing for the last
    # message are told ai_quota_exceeded by the count (never rate_limited by the burst), and a
    # burst refusal rolls the count back.
    async with ctx.transaction() as uow:
        found = await quota.consume(uow, principal.user_id)
        await quota.charge_burst(ctx.limiter, principal.user_id)
    return AiQuotaRead(
        limit=found.limit, used=found.used, remaining=found.remaining, resets_at=found.resets_at
    )
