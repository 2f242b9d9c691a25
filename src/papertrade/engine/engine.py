"""Matches resting LIMIT orders against the market stream; the books are a cache of the database."""

import asyncio
import dataclasses
import itertools
import logging
import time
from collections.abc import Coroutine, Iterable, Sequence
from decimal import Decimal
from typing import Any, cast

from sqlalchemy import Table, bindparam, select, update

from papertrade.conditional import service as conditional_service
from papertrade.conditional.events import ConditionalEvent, ConditionalPlaced
from papertrade.conditional.views import conditional_data
from papertrade.context import AppContext
from papertrade.db import CURRENT
from papertrade.engine import jobs as engine_jobs
from papertrade.engine import risk
from papertrade.engine.triggers import Fired, TriggerWatch
from papertrade.events import DomainEvent
from papertrade.faults.outage import log_failure
from papertrade.jobs.runtime import Jobs
from papertrade.kit.decimals import ZERO
from papertrade.kit.tasks import cancel_and_wait
from papertrade.models import ConditionalOrder, Order, Portfolio, Position
from papertrade.orders.events import OrderAccepted, OrderCanceled
from papertrade.orders.fills import apply_fill
from papertrade.orders.lifecycle import transition
from papertrade.orders.pending import OrderRows
from papertrade.orders.pricing import Venue, instrument_of
from papertrade.orders.record import AnyOrder, OrderRecord
from papertrade.positions import service as position_service
from papertrade.positions.events import PositionClosed, PositionLiquidated
from papertrade.trading import orders as rules
from papertrade.trading import realism
from papertrade.trading.book import Books, RestingOrder
from papertrade.trading.enums import Liquidity, OrderStatus, PositionSide, Side
from papertrade.trading.realism import Realism
from papertrade.trading.values import Instrument, Quote
from papertrade.uow import AsyncWork, SyncWork

log = logging.getLogger("papertrade.engine")
CHUNK = 500
FOLLOW_INTERVAL_S = 0.25
FOLLOW_LOOKBACK = 1000
FULL_PASS_EVERY = 40  # a full pass every 10 s drops orders cancelled by other processes
# How long an order this engine took out of its books is not put back from a read of the open
# orders: a read that began before the fill or cancel committed still shows the order open.
TAKEN_OUT_MEMORY_S = 60.0


@dataclasses.dataclass(slots=True)
class _Joined:
    orders: set[int] = dataclasses.field(default_factory=set)
    conditionals: set[int] = dataclasses.field(default_factory=set)


def _chunks(ids: list[int]) -> Iterable[list[int]]:
    for start in range(0, len(ids), CHUNK):
        yield ids[start : start + CHUNK]


class Engine:
    """One per deployment: owns the books, applies crossings and liquidations, and hands each
    funding time that passes to the job engine (`jobs`) to settle."""

    def __init__(self, ctx: AppContext, sweep_interval_s: float = 1.0, jobs: Jobs | None = None):
        self.ctx = ctx
        self.jobs = jobs
        self.books = Books()
        self.triggers = TriggerWatch()  # waiting conditional orders (stops, take-profits)
        self._seq = itertools.count()
        self._funding_seen: dict[str, Quote] = {}
        self._funding_unsent: set[str] = set()  # symbols whose settlement could not be sent
        self._sweep_interval_s = sweep_interval_s
        self._tasks: list[asyncio.Task[None]] = []
        self._listening = False
        self.active = False  # only the elected engine matches; a standby keeps empty books
        self._watermark = 0
        self._taken_out: dict[int, float] = {}  # order id → when this engine took it out
        self._background: set[asyncio.Task[None]] = set()
        # While a full pass reads: what joined the books and the watch since its read began (a
        # commit its snapshot missed), which the pass must not drop as closed.
        self._joined_during_read: _Joined | None = None

    def _note_taken_out(self, order_ids: Iterable[int]) -> None:
        now = time.monotonic()
        for order_id in order_ids:
            self._taken_out.pop(order_id, None)  # to the end: the dict stays in time order
            self._taken_out[order_id] = now
        self._forget_taken_out(now)

    def _forget_taken_out(self, now: float) -> None:
        """Drop what is older than the memory, oldest first: each id is dropped once, so the
        cost follows the crossings and cancels, not the size of the memory."""
        horizon = now - TAKEN_OUT_MEMORY_S
        taken_out = self._taken_out
        while taken_out:
            oldest = next(iter(taken_out))
            if taken_out[oldest] > horizon:
                break
            del taken_out[oldest]

    async def start(self) -> None:
        """Rebuild the books from the open orders in the database and follow the stream."""
        self.books = Books()
        self.triggers = TriggerWatch()
        self.active = True
        self._watermark = 0
        self._taken_out = {}
        count = await self.pick_up_open_orders(full=True)
        log.info("engine started with %d resting orders", count)
        assert self.ctx.market is not None
        if not self._listening:
            self.ctx.market.on_tick(self.on_tick)
            self.ctx.events.subscribe(self.on_events)
            self._listening = True
        self._tasks.append(asyncio.create_task(self._sweep_forever(), name="engine-sweep"))
        if not self.ctx.db.is_sqlite:
            # Other processes place and cancel orders too: follow the database.
            self._tasks.append(asyncio.create_task(self._follow_forever(), name="engine-follow"))

    async def stop(self) -> None:
        self.active = False
        await cancel_and_wait(*self._tasks)
        self._tasks.clear()
        self.books = Books()
        self.triggers = TriggerWatch()

    async def pick_up_open_orders(self, *, full: bool, joined: set[str] | None = None) -> int:
        """Add open orders missing from the books; a full pass also drops closed ones. The
        symbols of what was added go into `joined`."""
        if not full:
            orders, _ = await self._pick_up(full=False, joined=joined)
            return len(orders)
        self._joined_during_read = during = _Joined()
        try:
            orders, conditionals = await self._pick_up(full=True, joined=joined)
        finally:
            self._joined_during_read = None
        open_ids = orders | during.orders
        for symbol, book in self.books.items():
            for stale in [
                o.order_id for o in [*book.bids(), *book.asks()] if o.order_id not in open_ids
            ]:
                self.books.remove(symbol, stale)
        self.triggers.retain(conditionals | during.conditionals)
        return len(orders)

    async def _pick_up(self, *, full: bool, joined: set[str] | None) -> tuple[set[int], set[int]]:
        """Add what the database holds open and the books and the watch miss; the ids of the
        open orders and conditional orders read."""
        statement = select(Order).where(Order.is_open.is_(True))
        if not full:
            # Ids are assigned before commit, so a later commit can carry a lower id: look back.
            statement = statement.where(Order.id > self._watermark - FOLLOW_LOOKBACK)
        async with self.ctx.db.reader() as session:
            rows = list(await session.scalars(statement.order_by(Order.id)))
        self._forget_taken_out(time.monotonic())
        for order in rows:
            if order.id not in self.books.book(order.symbol) and order.id not in self._taken_out:
                self.rest(order)
                if joined is not None:
                    joined.add(order.symbol)
            self._watermark = max(self._watermark, order.id)
        conditionals = await self._pick_up_conditional(full=full, joined=joined)
        return {order.id for order in rows}, conditionals

    async def _pick_up_conditional(self, *, full: bool, joined: set[str] | None) -> set[int]:
        """Watch waiting conditional orders missing from the watch (at start, and what other
        processes placed); the ids of those read."""
        statement = select(ConditionalOrder).where(ConditionalOrder.is_open.is_(True))
        if not full:
            statement = statement.where(ConditionalOrder.id > self._watermark - FOLLOW_LOOKBACK)
        async with self.ctx.db.reader() as session:
            rows = list(await session.scalars(statement.order_by(ConditionalOrder.id)))
        for row in rows:
            if row.id not in self._taken_out and row.id not in self.triggers:
                self.triggers.watch(conditional_data(row))
                if joined is not None:
                    joined.add(row.symbol)
            self._watermark = max(self._watermark, row.id)
        return {row.id for row in rows}

    async def _follow_forever(self) -> None:
        passes = 0
        while True:
            await asyncio.sleep(FOLLOW_INTERVAL_S)
            passes += 1
            try:
                joined: set[str] = set()
                await self.pick_up_open_orders(full=passes % FULL_PASS_EVERY == 0, joined=joined)
                if joined:
                    await self.catch_up(joined)
            except Exception as exc:
                log_failure(log, "following open orders failed", exc, self.ctx.db.outages)

    async def save_trailing(self) -> None:
        """Save the best prices trailing stops moved to, so a restart resumes from them."""
        moved = self.triggers.moved()
        if not moved:
            return
        rows = [{"row_id": i, "extreme": extreme} for i, extreme in moved.items()]

        def run(uow: SyncWork) -> None:
            table = cast(Table, ConditionalOrder.__table__)  # Core: one executemany
            uow.session.execute(
                update(table)
                .where(table.c.id == bindparam("row_id"), table.c.is_open.is_(True))
                .values(trailing_extreme=bindparam("extreme")),
                rows,
            )

        # Bounded: at shutdown the writer may stop before this loop does, and a save that never
        # completes must not hold the engine (the next start resumes from the last saved price).
        async with asyncio.timeout(5):
            await self.ctx.run_unit(run)

    def rest(self, order: AnyOrder) -> None:
        """Put an open order in its book (price-time priority)."""
        assert order.price is not None
        remaining = order.quantity - order.filled_quantity
        self._add(
            order.symbol,
            RestingOrder(
                order.id,
                order.portfolio_id,
                Side(order.side),
                order.price,
                remaining,
                next(self._seq),
            ),
        )

    def _add(self, symbol: str, resting: RestingOrder) -> None:
        # Once: on PostgreSQL the follow pass, reading the database, may rest a new order
        # before its own commit's event reaches on_events.
        if self.active and resting.order_id not in self.books.book(symbol):
            self.books.add(symbol, resting)

    async def on_events(self, events: Sequence[DomainEvent]) -> None:
        """After each commit: a new resting order goes in its book, a cancelled one comes out."""
        joined: set[str] = set()
        for event in events:
            if isinstance(event, OrderAccepted) and event.resting:
                order = event.order
                joined.add(order["symbol"])
                if self._joined_during_read is not None:
                    self._joined_during_read.orders.add(event.order_id)
                self._add(
                    order["symbol"],
                    RestingOrder(
                        event.order_id,
                        event.portfolio_id,
                        Side(order["side"]),
                        order["price"],
                        event.remaining,
                        next(self._seq),
                    ),
                )
            elif isinstance(event, OrderCanceled):
                self.unrest(event.order["symbol"], event.order_id)
            elif isinstance(event, ConditionalPlaced):
                if self.active:
                    self.triggers.watch(event.conditional)
                    joined.add(event.symbol)
                    if self._joined_during_read is not None:
                        self._joined_during_read.conditionals.add(event.conditional_id)
            elif isinstance(event, ConditionalEvent) and self.active:
                self.triggers.unwatch(event.symbol, event.conditional_id, event.portfolio_id)
                self._note_taken_out([event.conditional_id])
            elif isinstance(event, PositionClosed | PositionLiquidated) and self.active:
                symbol = str(event.position["symbol"])
                if self.triggers.closes(event.portfolio_id, symbol):
                    side = str(event.position.get("position_side") or PositionSide.BOTH.value)
                    self._spawn(self._cancel_closing(event.portfolio_id, symbol, side))
        if joined:
            self._spawn(self.catch_up(joined))

    async def catch_up(self, symbols: set[str]) -> None:
        """Apply the latest quote again to what just joined the books and the watch: a tick
        that came between an order's commit and this moment did not see it (the order was
        checked against the mark before that tick), and the price may not come back."""
        market = self.ctx.market
        if market is None or not self.active:
            return
        for symbol in sorted(symbols):
            quote = market.quote(symbol)
            if quote is None:
                continue
            crossed = self.books.crossed(symbol, quote.mark_price)
            if crossed:
                self._note_taken_out(r.order_id for r in crossed)
                await self.fill_crossed(symbol, crossed, mark=quote.mark_price)
            fired = self.triggers.reached(quote)
            if fired is not None:
                self._note_taken_out(fired.ids)
                await self.trigger(fired)

    def unrest(self, symbol: str, order_id: int) -> None:
        if self.active:
            self.books.remove(symbol, order_id)
            self._note_taken_out([order_id])

    async def on_tick(self, quote: Quote) -> None:
        """Fill what the new mark crosses, and have funding settled when a funding time passes."""
        if not self.active:
            return
        if self.books.get(quote.symbol) is not None:
            crossed = self.books.crossed(quote.symbol, quote.mark_price)
            if crossed:
                self._note_taken_out(r.order_id for r in crossed)
                await self.fill_crossed(quote.symbol, crossed, mark=quote.mark_price)
        fired = self.triggers.reached(quote)
        if fired is not None:
            self._note_taken_out(fired.ids)
            await self.trigger(fired)
        previous = self._funding_seen.get(quote.symbol)
        if (
            previous is not None
            and quote.next_funding_time > previous.next_funding_time
            and not await self._send_funding(previous, quote)
        ):
            return  # the previous quote stays: the next tick sends that funding time again
        self._funding_seen[quote.symbol] = quote

    async def _send_funding(self, previous: Quote, quote: Quote) -> bool:
        """Enqueue the settlement of the funding time that just passed; False if it failed."""
        if self.jobs is None:
            log.error("no job engine: funding of %s not settled", quote.symbol)
            return True
        try:
            await self.jobs.enqueue(
                engine_jobs.SETTLE_FUNDING,
                symbol=quote.symbol,
                funding_time=previous.next_funding_time,
                rate=previous.funding_rate,
                mark=quote.mark_price,
            )
        except Exception:
            if quote.symbol not in self._funding_unsent:  # once per outage, not once per tick
                self._funding_unsent.add(quote.symbol)
                log.exception("sending the funding settlement of %s failed", quote.symbol)
            return False
        if quote.symbol in self._funding_unsent:
            self._funding_unsent.discard(quote.symbol)
            log.warning("the funding settlement of %s was sent after all", quote.symbol)
        return True

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _cancel_closing(self, portfolio_id: int, symbol: str, position_side: str) -> None:
        """One-cancels-other: the position closed (by any fill), so its waiting TP/SL go (in
        hedge mode, those of the side that closed)."""
        try:
            async with self.ctx.transaction() as uow:
                await conditional_service.cancel_closing_in(
                    uow, portfolio_id, symbol, position_side
                )
        except Exception:
            log.exception("cancelling the TP/SL of a closed %s position failed", symbol)

    async def trigger(self, fired: Fired) -> None:
        """Place the orders of triggered conditional orders, in one unit of work."""
        venue = Venue.of(self.ctx)
        try:
            await self.ctx.run_unit(
                lambda uow: conditional_service.trigger(uow, venue, fired.ids, fired.levels)
            )
        except Exception:
            log.exception(
                "triggering %d %s conditional orders failed; they keep waiting",
                len(fired.ids),
                fired.symbol,
            )
            self.triggers.put_back(fired)
            for conditional_id in fired.ids:
                self._taken_out.pop(conditional_id, None)

    async def fill_crossed(
        self, symbol: str, crossed: list[RestingOrder], *, mark: Decimal | None = None
    ) -> None:
        """Fill crossed orders at their limit prices (maker), in one unit of work; `mark`: the
        mark that crossed them (recorded on the fills)."""
        try:
            async with self.ctx.transaction() as uow:
                partly = await self._apply_crossed(uow, symbol, crossed, mark)
        except Exception as exc:
            what = f"filling {len(crossed)} crossed {symbol} orders failed; they stay resting"
            log_failure(log, what, exc, self.ctx.db.outages)
            for resting in crossed:
                self.books.add(symbol, resting)
            return
        # Partly filled against the modelled depth (realistic profile): the rest keeps its place.
        for resting in partly:
            self._taken_out.pop(resting.order_id, None)
            self._add(symbol, resting)

    async def _apply_crossed(
        self, uow: AsyncWork, symbol: str, crossed: list[RestingOrder], mark: Decimal | None
    ) -> list[RestingOrder]:
        """Fill what is still open; return what stays resting with a smaller quantity."""
        session = uow.session
        # The portfolios are locked before their orders, as everything else takes them (a
        # cancel of all open orders, a liquidation): the other way round, the engine and a bot
        # cancelling its orders deadlocked on PostgreSQL. A resting order's portfolio never
        # changes, and an order that closed meanwhile is skipped below.
        portfolio_ids = sorted({r.portfolio_id for r in crossed})
        portfolios: dict[int, Portfolio] = {}
        positions: dict[tuple[int, str], Position] = {}  # by portfolio and position side
        any_side: dict[int, Position] = {}  # one of each portfolio's rows (its symbol settings)
        for chunk in _chunks(portfolio_ids):
            found = await session.scalars(
                select(Portfolio)
                .where(Portfolio.id.in_(chunk))
                .order_by(Portfolio.id)
                .with_for_update()
                .execution_options(**CURRENT)
            )
            portfolios.update((p.id, p) for p in found)
            held = await session.scalars(
                select(Position)
                .where(Position.portfolio_id.in_(chunk), Position.symbol == symbol)
                .execution_options(**CURRENT)
            )
            for held_row in held:
                positions[(held_row.portfolio_id, held_row.position_side)] = held_row
                any_side[held_row.portfolio_id] = held_row
        orders: dict[int, OrderRecord] = {}
        # Plain records, not ORM instances: filling changes each order's state a dozen times,
        # and the rows go back in one executemany (orders/pending.py).
        table = Order.__table__
        for chunk in _chunks([r.order_id for r in crossed]):
            rows = await session.execute(
                select(table).where(table.c.id.in_(chunk)).with_for_update()
            )
            orders.update((row.id, OrderRecord(**row._mapping)) for row in rows)
        instrument = instrument_of(self.ctx.market, symbol)
        partly: list[RestingOrder] = []
        for resting in crossed:
            order = orders.get(resting.order_id)
            if order is None or not order.is_open:
                continue  # cancelled (or filled) since it was put in the book: one outcome only
            uow.part(OrderRows).filled.append(order)
            portfolio = portfolios[order.portfolio_id]
            key = (portfolio.id, order.position_side)
            position = positions.get(key)
            if position is None:
                position = position_service.flat_position(
                    portfolio.id,
                    instrument,
                    self.ctx.settings.default_leverage,
                    order.position_side,
                    like=any_side.get(portfolio.id),
                )
                session.add(position)
                positions[key] = any_side[portfolio.id] = position
            self._fill_one(uow, portfolio, position, order, instrument, mark)
            if order.is_open:
                left = order.quantity - order.filled_quantity
                partly.append(dataclasses.replace(resting, quantity=left))
        return partly

    def _fill_one(
        self,
        uow: AsyncWork,
        portfolio: Portfolio,
        position: Position,
        order: OrderRecord,
        instrument: Instrument,
        mark: Decimal | None = None,
    ) -> None:
        assert order.price is not None
        quantity = order.quantity - order.filled_quantity
        if order.action == "close":
            # Reduce-only: never more than the position, never in the growing direction.
            if rules.reducing_side(position.quantity) is not Side(order.side):
                quantity = ZERO
            quantity = min(quantity, abs(position.quantity))
        # The realistic profile fills at most the modelled depth at the price per crossing tick;
        # what is left keeps resting (fill_crossed puts it back in the book).
        depth_capped = realism.maker_quantity(
            Realism(portfolio.realism),
            quantity,
            order.price,
            instrument.step_size,
            realism.depth_usdt(order.symbol),
        )
        rests = depth_capped < quantity
        quantity = depth_capped
        if quantity > ZERO:
            apply_fill(
                uow,
                portfolio,
                position,
                order,
                price=order.price,
                quantity=quantity,
                liquidity=Liquidity.MAKER,
                mark=mark,
            )
        if order.is_open and order.status != OrderStatus.FILLED and not rests:
            # A reduce-only remainder with nothing left to reduce expires, as on Binance.
            transition(uow, order, OrderStatus.EXPIRED, "reduce-only: nothing was left to reduce")

    async def _sweep_forever(self) -> None:
        while True:
            await asyncio.sleep(self._sweep_interval_s)
            try:
                await risk.liquidate_underwater(self.ctx)
            except Exception as exc:
                log_failure(log, "liquidation sweep failed", exc, self.ctx.db.outages)
            try:  # every database: the sweep runs on SQLite too, the follow loop does not
                await self.save_trailing()
            except Exception as exc:
                log_failure(log, "saving trailing stops failed", exc, self.ctx.db.outages)
