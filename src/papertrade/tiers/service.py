"""A user's tier, paying for it from the wallet, and the limits checked where objects are made.

A paid period lasts 30 days from payment. Renewing the same tier adds 30 days to the end of the
current period. Changing tier starts a new period now: the unused part of the old one is
refunded to the wallet pro rata, then the new tier's price is paid (both in one unit of work:
with too little in the wallet nothing changes). Going back to free refunds the unused part.
"""

from decimal import Decimal

from papertrade.auth.events import CredentialsRevoked
from papertrade.errors import Conflict
from papertrade.kit.decimals import ZERO, usdt6
from papertrade.ledger.service import post_wallet
from papertrade.models import Membership
from papertrade.tiers.limits import effective
from papertrade.tiers.table import FREE, PERIOD_MS, TIERS
from papertrade.trading.enums import LedgerKind
from papertrade.uow import AsyncWork
from papertrade.wallet import service as wallets


def _unused(found: Membership | None, now: int) -> Decimal:
    """What the unused rest of the current paid period is worth, at 6 decimals."""
    if found is None or found.paid_until <= now:
        return ZERO
    tier = TIERS.get(found.tier, FREE)  # each 30 days of it were paid at its price
    return usdt6(tier.price * Decimal(found.paid_until - now) / Decimal(PERIOD_MS))


async def change(uow: AsyncWork, user_id: int, name: str) -> Membership | None:
    """Pay for `name` (or go back to free) from the wallet; see the module's rules. Credential
    caches reload after it commits, so the new tier's API rate applies at once."""
    uow.emit(CredentialsRevoked())
    tier = TIERS[name]
    actor = wallets.user_actor(user_id)
    wallet = await wallets.locked(uow, user_id)  # first: every tier change of a user in turn
    found = await uow.session.get(Membership, user_id, with_for_update=True)
    now = uow.now()
    current = effective(found, now)
    if tier.name == FREE.name:
        if current is FREE:
            raise Conflict("You are on the free tier already.", code="tier_unchanged")
        assert found is not None
        refund = _unused(found, now)
        if refund > 0:
            post_wallet(
                uow,
                wallet,
                LedgerKind.TIER_REFUND,
                refund,
                actor=actor,
                note=f"unused {found.tier} period",
            )
        found.paid_until = now
        return found
    if found is not None and current is tier:  # renew: the period gets 30 more days
        post_wallet(
            uow,
            wallet,
            LedgerKind.TIER_PAYMENT,
            -tier.price,
            actor=actor,
            note=f"{tier.name}: 30 more days",
        )
        found.paid_until += PERIOD_MS
        return found
    refund = _unused(found, now)
    if refund > 0 and found is not None:
        post_wallet(
            uow,
            wallet,
            LedgerKind.TIER_REFUND,
            refund,
            actor=actor,
            note=f"unused {found.tier} period",
        )
    post_wallet(
        uow, wallet, LedgerKind.TIER_PAYMENT, -tier.price, actor=actor, note=f"{tier.name}: 30 days"
    )
    if found is None:
        found = Membership(user_id=user_id, tier=tier.name, period_start=now, paid_until=0)
        uow.session.add(found)
    found.tier = tier.name
    found.period_start = now
    found.paid_until = now + PERIOD_MS
    return found
