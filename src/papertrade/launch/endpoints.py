"""/v1/launch: registration mode, my invitation codes, code check, the waitlist."""

from typing import Annotated

from fastapi import APIRouter, Query, Request

from papertrade.auth.client_ip import client_key
from papertrade.auth.v1 import Caller, Ctx
from papertrade.errors import RateLimited
from papertrade.kit.time import now_ms
from papertrade.launch import service
from papertrade.launch.schemas import (
    CodeCheck,
    InviteCodeRead,
    RegistrationRead,
    WaitlistAccepted,
    WaitlistJoin,
    WaitlistStanding,
    WaitlistVerify,
)
from papertrade.users.service import normalise_email

router = APIRouter(tags=["launch"])
CodeParam = Annotated[str, Query(min_length=1, max_length=32)]
HOUR_S = 3600


@router.get("/launch/registration", response_model=RegistrationRead)
async def registration(ctx: Ctx) -> RegistrationRead:
    """Who may sign up now: open, invite_only or waitlist (public)."""
    return RegistrationRead(mode=ctx.settings.registration_mode)


@router.get("/launch/invitations", response_model=list[InviteCodeRead])
async def my_invitations(principal: Caller, ctx: Ctx) -> list[InviteCodeRead]:
    """The caller's invitation codes (three single-use codes come with every account)."""
    async with ctx.db.reader() as session:
        rows = await service.my_codes(session, principal.user_id)
        return [InviteCodeRead.model_validate(row) for row in rows]


@router.get("/launch/invitations/check", response_model=CodeCheck)
async def check_code(code: CodeParam, ctx: Ctx) -> CodeCheck:
    """Whether a code would let someone sign up now (the sign-up page's ?code= prefill)."""
    async with ctx.db.reader() as session:
        return CodeCheck(valid=await service.is_live(session, code, now_ms()))


def _standing(ctx: Ctx, code: str, found: service.Standing) -> WaitlistStanding:
    base = ctx.settings.public_base_url.rstrip("/")
    return WaitlistStanding(
        position=found.position,
        referrals=found.referrals,
        verified=found.verified,
        invited=found.invited,
        referral_code=code,
        referral_url=f"{base}/waitlist?ref={code}",
    )


@router.post("/launch/waitlist", status_code=202, response_model=WaitlistAccepted)
async def join_waitlist(body: WaitlistJoin, request: Request, ctx: Ctx) -> WaitlistAccepted:
    """Join the waitlist; the place counts once the e-mailed link is followed (double opt-in).
    The same answer whether or not the address was on it already."""
    address = client_key(request.scope, ctx.settings)
    limit = ctx.settings.rate_limit_waitlist_ip_per_hour
    usage = await ctx.limiter.hit(f"waitlist:ip:{address}", limit, HOUR_S)
    if not usage.allowed:
        raise RateLimited(
            f"Too many waitlist sign-ups from your address ({limit} an hour); retry in "
            f"{usage.retry_after} s.",
            retry_after=usage.retry_after,
        )
    async with ctx.transaction() as uow:
        await service.join(uow, normalise_email(str(body.email)), body.referral_code)
    return WaitlistAccepted()


async def _verify(ctx: Ctx, token: str) -> WaitlistStanding:
    async with ctx.transaction() as uow:
        entry = await service.verify(uow, token)
        code = entry.referral_code
    async with ctx.db.reader() as session:
        return _standing(ctx, code, await service.standing(session, code))


@router.post("/launch/waitlist/verify", response_model=WaitlistStanding)
async def verify_waitlist(body: WaitlistVerify, ctx: Ctx) -> WaitlistStanding:
    """Confirm the address with the e-mailed token: the entry takes its place in line."""
    return await _verify(ctx, body.token)


@router.get("/launch/waitlist/verify", response_model=WaitlistStanding)
async def verify_waitlist_by_link(
    token: Annotated[str, Query(min_length=1, max_length=200)], ctx: Ctx
) -> WaitlistStanding:
    """The link in the waitlist's confirmation e-mail (mail/waitlist.py)."""
    return await _verify(ctx, token)


@router.get("/launch/waitlist/position", response_model=WaitlistStanding)
async def waitlist_position(referral_code: CodeParam, ctx: Ctx) -> WaitlistStanding:
    """A waitlister's place in line, by their referral code."""
    async with ctx.db.reader() as session:
        found = await service.standing(session, referral_code)
    return _standing(ctx, referral_code.upper(), found)
