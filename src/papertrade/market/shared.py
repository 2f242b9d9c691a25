"""Scale-out market data: the engine leader runs the upstream feed and shares it through Redis.

Every process of a deployment on PostgreSQL with Redis serves its prices from one `SharedFeed`.
In the process that holds the engine leadership it runs the upstream feed (Binance, the simulation
or a replay), hands each quote to the local handlers (the engine, the WebSocket channels) and
publishes it to Redis: the quote on a pub/sub channel, and the latest quote per symbol in a hash so
that a process that starts or takes over has every price at once. A heartbeat key carries the
leader's feed status and the instrument catalogue. Every other process follows: its quotes,
instruments and status come from Redis, and its order path checks their age like the leader's.
"""

import asyncio
import contextlib
import hashlib
import logging
import uuid
from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

import orjson
from redis.asyncio import Redis
from redis.asyncio.client import PubSub
from redis.exceptions import RedisError

from papertrade.kit.tasks import (
    cancel_and_wait,
    cancel_redis_listeners,
    cancel_requested,
    next_message,
    wait_up_to,
)
from papertrade.kit.time import now_ms
from papertrade.market import wire
from papertrade.market.fanout import TickFanout, feed_status
from papertrade.market.feed import MarketFeed, TickHandler
from papertrade.trading.values import FundingRecord, Instrument, Kline, Quote, Ticker24h

log = logging.getLogger("papertrade.market.shared")

HEARTBEAT_S = 1.0  # the leader's status key is rewritten this often
LEADER_SILENT_MS = 5_000  # no heartbeat for this long: no live leader
RELAY_QUIET_MS = 2_000  # a follower hearing nothing for this long re-reads the hash
OUTBOX_LIMIT = 20_000  # quotes waiting for Redis beyond this are dropped (oldest first)
RETRY_MAX_S = 30.0
REDIS_ERRORS = (RedisError, OSError)
STOP_WAIT_S = 5.0


@runtime_checkable
class Resumable(Protocol):
    """A feed whose position can be handed to another process (the replay clock)."""

    def checkpoint(self) -> dict[str, int] | None: ...

    def resume(self, state: dict[str, int]) -> None: ...


@runtime_checkable
class HistoryOnDemand(Protocol):
    """A feed that must be told to serve history when it is not streaming (Binance REST)."""

    async def open_history(self, instruments: dict[str, Instrument]) -> None: ...


class SharedFeed:
    """The MarketFeed of every scale-out process: upstream when leading, Redis when following.

    `lead()` and `follow()` are called by the engine election (engine/leader.py); they may come
    before `start()`, which then applies the role.
    """

    def __init__(
        self,
        upstream: MarketFeed,
        redis: Redis,
        namespace: str,
        *,
        stale_after_ms: int = 15_000,
        clock: Callable[[], int] = now_ms,
    ) -> None:
        self.upstream = upstream
        self.name = upstream.name  # the leader's source once its heartbeat is read
        self.redis = redis
        self.stale_after_ms = stale_after_ms
        self.origin = uuid.uuid4().hex[:12]  # this process, in heartbeats and relayed batches
        prefix = f"pt:{namespace}:market"
        self.quotes_key = f"{prefix}:quotes"
        self.instruments_key = f"{prefix}:instruments"
        self.heartbeat_key = f"{prefix}:leader"
        self.channel = f"{prefix}:ticks"
        self._clock = clock
        self.leading = False
        self._started = False
        self._upstream_live = False
        self._quotes: dict[str, Quote] = {}
        self._instruments: dict[str, Instrument] = {}
        self._digest = ""  # of the catalogue held
        self._published_digest = ""  # of the catalogue this process last wrote to Redis
        self._heartbeat: dict[str, Any] | None = None  # the leader's, as last read
        self._fanout = TickFanout()
        self._outbox: list[Quote] = []
        self._wake = asyncio.Event()  # quotes are waiting in the outbox
        self._beat_now = asyncio.Event()  # write or read the heartbeat without waiting
        self._resync = asyncio.Event()  # re-read the hash before following the channel
        self._relay_up = False
        self._last_relayed = 0  # wall ms of the last batch heard on the channel
        self._tasks: list[asyncio.Task[None]] = []
        self._retry: asyncio.Task[None] | None = None
        self._pubsub: PubSub | None = None
        self.publish_errors = 0
        upstream.on_tick(self._from_upstream)

    # -- lifecycle and role ----------------------------------------------------------------------

    async def start(self) -> None:
        """Read the latest prices and catalogue from Redis, follow the channel, apply the role."""
        if self._started:
            return
        self._started = True
        try:
            await self._read_heartbeat()
            await self._load_snapshot(deliver=False)
        except REDIS_ERRORS as exc:
            log.warning("market data: Redis unavailable at start (%s); retrying", exc)
        if not self._instruments:
            self._set_instruments(self.upstream.instruments())  # built the same way
        self._tasks = [
            asyncio.create_task(self._listen_forever(), name="market-relay-listen"),
            asyncio.create_task(self._publish_forever(), name="market-relay-publish"),
            asyncio.create_task(self._heartbeat_forever(), name="market-relay-heartbeat"),
        ]
        if self.leading:
            await self._start_upstream()

    async def stop(self) -> None:
        """Stop the upstream (if running) and every Redis task."""
        self._started = False
        await self._stop_upstream()
        await cancel_redis_listeners(*self._tasks, grace_s=STOP_WAIT_S)
        self._tasks.clear()
        if self._pubsub is not None:
            with contextlib.suppress(Exception):
                await self._pubsub.aclose()  # type: ignore[no-untyped-call]
            self._pubsub = None

    async def lead(self) -> None:
        """This process now holds the engine leadership: run the upstream and publish."""
        if self.leading:
            return
        self.leading = True
        self.name = self.upstream.name
        log.info("market data: leading; the %s feed runs here and is shared", self.name)
        if self._started:
            await self._start_upstream()

    async def follow(self) -> None:
        """Another process leads (or this one is stopping): stop the upstream, follow Redis."""
        if not self.leading:
            return
        self.leading = False
        await self._stop_upstream()
        self._resync.set()
        log.info("market data: following the engine leader's prices through Redis")

    async def _start_upstream(self) -> None:
        try:
            await self.upstream.start()
        except Exception as exc:
            log.error("market data: the %s feed did not start (%s)", self.upstream.name, exc)
            self._retry = asyncio.create_task(self._retry_upstream(), name="market-upstream")
            return
        self._upstream_started()

    async def _retry_upstream(self) -> None:
        delay = 1.0
        while self.leading:
            await asyncio.sleep(delay)
            try:
                await self.upstream.start()
            except Exception as exc:
                delay = min(delay * 2, RETRY_MAX_S)
                log.error("market data: the %s feed did not start (%s)", self.upstream.name, exc)
                continue
            self._upstream_started()
            return

    def _upstream_started(self) -> None:
        self._upstream_live = True
        self._set_instruments(self.upstream.instruments() or self._instruments)
        # Quotes the upstream loaded without publishing (Binance's premiumIndex) are shared too.
        loaded = [
            q
            for s, q in self.upstream.quotes().items()
            if s not in self._quotes or q.time > self._quotes[s].time
        ]
        for quote in loaded:
            self._quotes[quote.symbol] = quote
        self._queue(loaded)
        self._beat_now.set()

    async def _stop_upstream(self) -> None:
        retry, self._retry = self._retry, None
        if retry is not None:
            await cancel_and_wait(retry)
        self._upstream_live = False
        await self.upstream.stop()

    # -- leading: upstream quotes to local handlers and to Redis ---------------------------------

    async def _from_upstream(self, quote: Quote) -> None:
        if not self.leading:
            return  # not ours to share (a test pinning a price on a follower's idle simulation)
        self._quotes[quote.symbol] = quote
        self._queue([quote])
        await self._fanout.publish([quote])

    def _queue(self, quotes: list[Quote]) -> None:
        if not quotes:
            return
        self._outbox.extend(quotes)
        if len(self._outbox) > OUTBOX_LIMIT:
            del self._outbox[: len(self._outbox) - OUTBOX_LIMIT]
        self._wake.set()

    async def _publish_forever(self) -> None:
        while not cancel_requested():
            await self._wake.wait()
            self._wake.clear()
            batch, self._outbox = self._outbox, []
            if not batch:
                continue
            latest = {q.symbol: wire.encode_quote(q) for q in batch}
            message = orjson.dumps(
                {"origin": self.origin, "quotes": [wire.quote_row(q) for q in batch]}
            )
            try:
                async with self.redis.pipeline(transaction=False) as pipe:
                    pipe.hset(self.quotes_key, mapping=latest)  # type: ignore[arg-type]
                    pipe.publish(self.channel, message)
                    await pipe.execute()
            except REDIS_ERRORS as exc:
                if cancel_requested():
                    raise asyncio.CancelledError from exc
                self.publish_errors += 1
                if self.publish_errors == 1 or self.publish_errors % 100 == 0:
                    log.error("market data: publishing to Redis failed (%s)", exc)
                await asyncio.sleep(0.5)  # the next ticks carry the prices again

    async def _write_heartbeat(self) -> None:
        if self._digest and self._digest != self._published_digest:
            await self.redis.set(self.instruments_key, wire.encode_instruments(self._instruments))
            self._published_digest = self._digest
        status = self.upstream.status()
        checkpoint = self.upstream.checkpoint() if isinstance(self.upstream, Resumable) else None
        beat = {
            "origin": self.origin,
            "source": self.upstream.name,
            "simulated": bool(status.get("simulated")),
            "connected": bool(status.get("connected")) and self._upstream_live,
            "stale": bool(status.get("stale")) or not self._upstream_live,
            "detail": str(status.get("detail", "")),
            "published": self._clock(),
            "instruments": self._published_digest,
            "checkpoint": checkpoint,
        }
        await self.redis.set(self.heartbeat_key, orjson.dumps(beat))

    # -- following: Redis to local handlers ------------------------------------------------------

    async def _listen_forever(self) -> None:
        delay = 0.1
        while not cancel_requested():
            try:
                if self._pubsub is None:
                    pubsub = self.redis.pubsub()
                    await pubsub.subscribe(self.channel)
                    self._pubsub = pubsub
                    self._relay_up = True
                    self._resync.set()  # anything published while we were away is in the hash
                if self._resync.is_set() and not self.leading:
                    self._resync.clear()
                    await self._load_snapshot(deliver=True)
                message = await next_message(self._pubsub, wait_s=0.5)
                delay = 0.1
            except REDIS_ERRORS as exc:
                if cancel_requested():
                    raise asyncio.CancelledError from exc
                if delay == 0.1:  # once per outage, not once per attempt
                    log.warning("market data: Redis relay lost (%s); reconnecting", exc)
                self._relay_up = False
                if self._pubsub is not None:
                    with contextlib.suppress(Exception):
                        await self._pubsub.aclose()  # type: ignore[no-untyped-call]
                    self._pubsub = None
                await asyncio.sleep(delay)
                delay = min(delay * 2, 5.0)
                continue
            if message is not None and message.get("type") == "message" and not self.leading:
                await self._relayed(message["data"])

    async def _relayed(self, raw: bytes) -> None:
        try:
            body = orjson.loads(raw)
            quotes = [wire.quote_from_row(row) for row in body["quotes"]]
        except (ValueError, TypeError, KeyError):
            log.exception("market data: malformed batch on the Redis relay")
            return
        self._last_relayed = self._clock()
        for quote in quotes:
            self._quotes[quote.symbol] = quote
        await self._fanout.publish(quotes)

    async def _load_snapshot(self, *, deliver: bool) -> None:
        """Take every quote in the hash that is newer than ours (handlers see them if deliver)."""
        found = await self.redis.hgetall(self.quotes_key)
        fresh = []
        for raw in found.values():
            try:
                quote = wire.decode_quote(raw)
            except (ValueError, TypeError, KeyError):
                continue
            held = self._quotes.get(quote.symbol)
            if held is None or quote.time > held.time:
                self._quotes[quote.symbol] = quote
                fresh.append(quote)
        if deliver and fresh:
            await self._fanout.publish(sorted(fresh, key=lambda q: q.time))

    async def _read_heartbeat(self) -> None:
        raw = await self.redis.get(self.heartbeat_key)
        if raw is None:
            return
        try:
            beat = orjson.loads(raw)
            digest = str(beat["instruments"])
            self.name = str(beat["source"])
        except (ValueError, TypeError, KeyError):
            log.warning("market data: malformed leader heartbeat in Redis")
            return
        self._heartbeat = beat
        if digest and digest != self._digest:
            catalogue = await self.redis.get(self.instruments_key)
            if catalogue is not None:
                try:
                    self._set_instruments(wire.decode_instruments(catalogue))
                except (ValueError, TypeError, KeyError):
                    log.warning("market data: malformed instrument catalogue in Redis")
        checkpoint = beat.get("checkpoint")
        alive = self._clock() - int(beat.get("published", 0)) <= LEADER_SILENT_MS
        if alive and isinstance(checkpoint, dict) and isinstance(self.upstream, Resumable):
            # History (replay klines) stays in step, and a takeover continues the replay; after
            # the whole deployment was down, the replay starts over as in a single process.
            self.upstream.resume(checkpoint)

    async def _heartbeat_forever(self) -> None:
        while not cancel_requested():
            try:
                if self.leading:
                    await self._write_heartbeat()
                else:
                    await self._read_heartbeat()
                    if self._clock() - self._last_relayed > RELAY_QUIET_MS:
                        await self._load_snapshot(deliver=True)  # a silent channel: poll the hash
            except Exception as exc:
                if cancel_requested():
                    raise asyncio.CancelledError from exc
                if isinstance(exc, REDIS_ERRORS):
                    log.debug("market data: heartbeat skipped (%s)", exc)
                else:
                    log.exception("market data: heartbeat failed")
            await wait_up_to(self._beat_now, HEARTBEAT_S)
            self._beat_now.clear()

    def _set_instruments(self, instruments: dict[str, Instrument]) -> None:
        if not instruments:
            return
        self._instruments = dict(instruments)
        self._digest = hashlib.sha256(wire.encode_instruments(instruments)).hexdigest()[:16]

    # -- the MarketFeed interface ----------------------------------------------------------------

    def on_tick(self, handler: TickHandler) -> None:
        """Register a coroutine called with every quote (the upstream's or the relayed ones)."""
        self._fanout.add(handler)

    def instruments(self) -> dict[str, Instrument]:
        """The leader's catalogue (or, before any leader published one, this process's own)."""
        return dict(self._instruments)

    def quote(self, symbol: str) -> Quote | None:
        """The latest quote, however old (its `time` is when the leader received it)."""
        return self._quotes.get(symbol)

    def quotes(self) -> dict[str, Quote]:
        return dict(self._quotes)

    async def _history(self) -> MarketFeed:
        if not self.leading and isinstance(self.upstream, HistoryOnDemand):
            await self.upstream.open_history(self._instruments)
        return self.upstream

    async def klines(
        self,
        symbol: str,
        interval: str,
        start_ms: int | None = None,
        end_ms: int | None = None,
        limit: int = 500,
    ) -> list[Kline]:
        """Candles from this process's upstream object (history needs no stream)."""
        return await (await self._history()).klines(symbol, interval, start_ms, end_ms, limit)

    async def ticker_24h(self, symbol: str) -> Ticker24h:
        return await (await self._history()).ticker_24h(symbol)

    async def funding_history(
        self, symbol: str, start_ms: int | None, end_ms: int | None, limit: int
    ) -> list[FundingRecord]:
        return await (await self._history()).funding_history(symbol, start_ms, end_ms, limit)

    def status(self) -> dict[str, object]:
        """The upstream's status when leading; when following, the relayed prices' freshness."""
        if self.leading:
            status = self.upstream.status()
            detail = f"{status.get('detail', '')}; engine leader, shared through Redis"
            return {
                **status,
                "detail": detail,
                "role": "leader",
                "publish_errors": self.publish_errors,
            }
        now = self._clock()
        times = [q.time for q in self._quotes.values()]
        last = max(times) if times else None
        quiet = None if last is None else now - last
        beat = self._heartbeat
        alive = beat is not None and now - int(beat.get("published", 0)) <= LEADER_SILENT_MS
        stale = (
            quiet is None or quiet > self.stale_after_ms or bool(alive and beat and beat["stale"])
        )
        leader = f"leader {beat['origin']}" if beat else "no leader seen yet"
        if beat and not alive:
            leader += f" (silent for {now - int(beat.get('published', 0))} ms)"
        age = "no prices yet" if quiet is None else f"last update {quiet} ms ago"
        detail = f"following the {self.name} feed through Redis: {leader}, {age}"
        if alive and beat:
            detail += f"; leader reports: {beat.get('detail', '')}"
        return feed_status(
            self.name,
            simulated=bool(beat["simulated"]) if beat else self.name != "binance",
            connected=self._relay_up and alive and bool(beat and beat["connected"]),
            last_update=last,
            stale=stale,
            detail=detail,
            role="follower",
        )
