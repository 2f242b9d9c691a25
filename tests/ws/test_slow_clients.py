"""A stalled reader is dropped without delaying anyone else; nothing queues without bound."""

import asyncio
import time

from fastapi import FastAPI

from papertrade.ws.client import Client
from papertrade.ws.hub import Hub
from tests.conftest import sign_up
from tests.trading_api.helpers import sim
from tests.ws.helpers import RawSocket, Socket, socket

MESSAGES = 3000  # ~700 KB: twice what the stalled socket may hold


class _LoopStalls:
    """The longest this process's event loop went without running a task that asked to run
    every 5 ms: the time the machine did not give it (or work that held the loop). A client
    waited on by the server leaves the loop free, so it does not show here."""

    def __init__(self) -> None:
        self.longest = 0.0

    async def watch(self) -> None:
        while True:
            before = time.perf_counter()
            await asyncio.sleep(0.005)
            self.longest = max(self.longest, time.perf_counter() - before - 0.005)


async def _pump_and_measure(app: FastAPI, reader: Socket) -> tuple[list[float], float]:
    """Publish MESSAGES marks; each one's delay until the healthy client had it, sorted, and the
    event loop's longest stall meanwhile."""
    feed = sim(app)
    sent: dict[float, float] = {}
    delays: list[float] = []
    stalls = _LoopStalls()
    watching = asyncio.create_task(stalls.watch())

    async def read() -> None:
        while len(delays) < MESSAGES:
            message = await reader.recv(within=10)
            if message.get("type") != "mark_price":
                continue
            at = sent.get(message["data"]["mark_price"])
            if at is not None:
                delays.append(time.perf_counter() - at)

    task = asyncio.create_task(read())
    for i in range(MESSAGES):
        price = 40000 + i
        sent[float(price)] = time.perf_counter()
        await feed.set_price("BTCUSDT", price)
        # Paced so the healthy client (in this same process) can keep up: what is measured is
        # the server's delivery, not a reader falling behind its own backlog.
        if i % 5 == 0:
            await asyncio.sleep(0.001)
    try:
        await asyncio.wait_for(task, 20)
    finally:
        watching.cancel()
    await feed.release_price("BTCUSDT")
    return sorted(delays), stalls.longest


async def _drain(reader: Socket) -> None:
    while True:
        await reader.conn.recv()


async def _subscribers(hub: Hub, topic: str, count: int, within: float = 10) -> None:
    """Until `topic` has exactly `count` subscribers."""
    async with asyncio.timeout(within):
        while len(hub.topics.get(topic, ())) != count:  # noqa: ASYNC110 (the hub has no event)
            await asyncio.sleep(0.01)


async def test_a_stalled_client_is_dropped_and_others_keep_up(
    fast_app: tuple[FastAPI, str],
) -> None:
    app, url = fast_app
    realtime = app.state.realtime
    assert realtime is not None
    owner = await sign_up(app)
    try:
        key = await owner.api_key()
        async with socket(url, key) as healthy:
            await healthy.subscribe("mark_price:BTCUSDT")
            # The yardstick: what the healthy client gets beside a second client that reads, the
            # same work per message (two subscribers, one of them this process's own reader) as
            # beside the stalled one, so that a loaded machine, where this process is short of
            # CPU and every message queues, slows both runs alike.
            async with socket(url, key) as reading:
                await reading.subscribe("mark_price:BTCUSDT")
                draining = asyncio.create_task(_drain(reading))
                try:
                    beside, _ = await _pump_and_measure(app, healthy)
                finally:
                    draining.cancel()
            await _subscribers(realtime.hub, "mark_price:BTCUSDT", 1)  # its subscription ended
            stalled = await RawSocket.open(url, key)
            stalled.send(op="subscribe", channels=["mark_price:BTCUSDT"])
            await _subscribers(realtime.hub, "mark_price:BTCUSDT", 2)  # the stalled one's is in
            before = len(realtime.hub.clients)
            delays, stalled_loop = await _pump_and_measure(app, healthy)
            assert len(delays) == MESSAGES  # the healthy client lost nothing…
            # …and was never held up by the stalled one: a client waited on would see seconds.
            middle = len(delays) // 2
            assert delays[middle] < 2 * beside[middle] + 0.1, (delays[middle], beside[middle])
            # The worst delay, less what the machine took from the whole process meanwhile:
            # beside two busy loops one message once took 2.9 s against 0.46 s, the median
            # holding, as the process stood still; a wait on the stalled client would not stop
            # the loop, so it still counts in full.
            worst = delays[-1] - stalled_loop
            assert worst < 2 * beside[-1] + 1.0, (delays[-1], stalled_loop, beside[-1])
            assert len(realtime.hub.clients) == before - 1  # the stalled client is gone
        assert await stalled.drain_until_closed()
        stalled.close()
    finally:
        await owner.client.aclose()


class _BlockedWebSocket:
    """Stands in for a socket whose peer stopped reading: every send waits forever."""

    def __init__(self, blocked: bool):
        self.blocked = blocked
        self.sent: list[str] = []

    async def send_text(self, text: str) -> None:
        if self.blocked:
            await asyncio.Event().wait()
        self.sent.append(text)


async def test_portable_writer_bounds_its_queue_and_drops_the_stalled_client() -> None:
    """Under servers other than uvicorn's sansio protocol, the queue-and-task writer is used."""
    hub = Hub()
    stalled_ws, healthy_ws = _BlockedWebSocket(True), _BlockedWebSocket(False)
    stalled = Client(stalled_ws, max_buffer=10_000, direct=False)  # type: ignore[arg-type]
    healthy = Client(healthy_ws, max_buffer=10_000, direct=False)  # type: ignore[arg-type]
    for client in (stalled, healthy):
        hub.attach(client)
        hub.subscribe(client, "mark_price:BTCUSDT")
    payload = b'{"type":"mark_price","data":{"mark_price":1.0}}'
    for _ in range(1000):  # ~48 KB: far past the stalled client's 10 KB allowance
        hub.publish("mark_price:BTCUSDT", payload)
        await asyncio.sleep(0)
    await asyncio.sleep(0.01)
    assert stalled.dropped and not healthy.dropped
    assert len(healthy_ws.sent) == 1000
    assert stalled._queued <= 10_000
    for client in (stalled, healthy):
        hub.detach(client)
