"""Live marks for the positions channel: open positions re-priced once a second.

Position events (opened, changed, closed, liquidated) carry the mark at the fill. Between fills
the subscribers of `positions:<id>` also get `position.mark`: every open position of the portfolio
at the current mark with its unrealized PnL. These are snapshots, not events: they carry no
sequence numbers, and a lost one is replaced by the next.
"""

import asyncio
import logging
from decimal import Decimal

from sqlalchemy import select

from papertrade.context import AppContext
from papertrade.kit.decimals import ZERO
from papertrade.kit.tasks import cancel_and_wait
from papertrade.kit.time import now_ms
from papertrade.models import Position
from papertrade.trading import position as position_math
from papertrade.ws.frames import dumps, native_data
from papertrade.ws.hub import Hub

log = logging.getLogger("papertrade.ws")
CHUNK = 500


class PositionMarks:
    """Publishes `position.mark` for every subscribed portfolio with open positions."""

    def __init__(self, hub: Hub, ctx: AppContext, interval_s: float = 1.0):
        self.hub = hub
        self.ctx = ctx
        self.interval_s = interval_s
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._forever(), name="ws-position-marks")

    async def stop(self) -> None:
        if self._task is not None:
            await cancel_and_wait(self._task)
            self._task = None

    async def _forever(self) -> None:
        while True:
            await asyncio.sleep(self.interval_s)
            try:
                await self.publish()
            except Exception:
                log.exception("position marks failed")

    async def publish(self) -> None:
        """One round: read the open positions of subscribed portfolios, price them, send."""
        feed = self.ctx.market
        ids = sorted(
            int(rest)
            for kind, _, rest in (t.partition(":") for t in self.hub.topics)
            if kind == "positions" and rest.isdigit()
        )
        if not ids or feed is None:
            return
        held: dict[int, list[Position]] = {}
        async with self.ctx.db.reader() as session:
            for start in range(0, len(ids), CHUNK):
                found = await session.scalars(
                    select(Position).where(
                        Position.portfolio_id.in_(ids[start : start + CHUNK]),
                        Position.quantity != ZERO,
                    )
                )
                for row in found:
                    held.setdefault(row.portfolio_id, []).append(row)
        time = now_ms()
        for portfolio_id, rows in held.items():
            positions = []
            total = Decimal(0)
            for row in sorted(rows, key=lambda r: r.symbol):
                quote = feed.quote(row.symbol)
                mark = quote.mark_price if quote is not None else row.entry_price
                pnl = position_math.unrealized_pnl(row.quantity, row.entry_price, mark)
                total += pnl
                positions.append(
                    native_data(
                        {
                            "symbol": row.symbol,
                            "side": "long" if row.quantity > 0 else "short",
                            "quantity": row.quantity,
                            "entry_price": row.entry_price,
                            "mark_price": mark,
                            "unrealized_pnl": pnl,
                            "leverage": row.leverage,
                        }
                    )
                )
            topic = f"positions:{portfolio_id}"
            message = {
                "channel": topic,
                "type": "position.mark",
                "portfolio_id": portfolio_id,
                "time": time,
                "data": {
                    "positions": positions,
                    "unrealized_pnl": native_data({"unrealized_pnl": total})["unrealized_pnl"],
                },
            }
            self.hub.publish(topic, dumps(message))
