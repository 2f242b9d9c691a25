"""Claiming an anchor before sending it: a run marks it `sending` (compare and set) before it
calls out, so two runs at once (the scheduler's and an operator's, or a slow run overlapping
the next) never send the same root twice. A claim left by a process that died mid-send is taken
again after CLAIM_STALE_MS. Used by the calendar submissions (attest.py) and the TRON memo
(tron.py)."""

from typing import Any

from sqlalchemy import and_, or_, update

from papertrade.context import AppContext
from papertrade.kit.time import now_ms
from papertrade.models import AttestationAnchor

CLAIM_STALE_MS = 10 * 60_000  # far longer than one send (a few calls of 10 s at most)
CLAIMABLE = ("queued", "retrying")


def claimable() -> Any:
    """Anchors waiting to be sent: queued, retrying, or claimed by a run that died."""
    return or_(
        AttestationAnchor.status.in_(CLAIMABLE),
        and_(
            AttestationAnchor.status == "sending",
            AttestationAnchor.updated_at < now_ms() - CLAIM_STALE_MS,
        ),
    )


async def claim(ctx: AppContext, anchor_id: int) -> bool:
    """Mark the anchor `sending` unless another run got there first."""
    async with ctx.transaction() as uow:
        claimed = await uow.session.execute(
            update(AttestationAnchor)
            .where(AttestationAnchor.id == anchor_id, claimable())
            .values(status="sending", updated_at=now_ms())
        )
        return bool(getattr(claimed, "rowcount", 0) == 1)
