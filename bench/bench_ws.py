"""WebSocket fan-out: N clients subscribed to one symbol's mark price.

Run: .venv/bin/python bench/bench_ws.py [--clients 1000] [--rates 50,100,200] [--seconds 10]
                                         [--flush-ms 0] [--binance]

`--binance`: the Binance-compatible streams (docs/fapi-ws.md) instead of the native channel:
half the clients on `/ws/btcusdt@depth@100ms` (a diff of the synthetic book per mark), half on
`/ws/!markPrice@arr@1s` (every symbol's mark once a second); the latency is the receive time
minus the diff's `T` (the quote's time) or the mark payload's `E`, p99 printed per stream.

The server is the real app (`create_app`, simulated market, a throwaway SQLite database) under
uvicorn in a child process. Once every client has subscribed, a task inside the server pins the
BTCUSDT mark `rate` times a second through the market feed (`SimFeed.set_price`), i.e. the same
path a live tick takes: feed → hub → every subscriber. The load generator is deliberately cheap
(architecture §7): one process of raw asyncio sockets that count WebSocket frames by their
headers; only a sample of connections parse JSON, for the latency (client receive time minus the
quote's time, set when it was published; both clocks are this machine's).
"""

import argparse
import asyncio
import base64
import functools
import os
import platform
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, ClassVar

import httpx
import orjson

SYMBOL = "BTCUSDT"
SAMPLED = 50  # connections that parse JSON for latency


# -- server (child process) --------------------------------------------------------------------


DEPTH, MARKS = "btcusdt@depth@100ms", "!markPrice@arr@1s"


def serve(
    port: int,
    clients: int,
    rate: float,
    seconds: float,
    flush_ms: float,
    var: Path,
    binance: bool = False,
) -> None:
    """Run the app on `port`; publish `rate` marks/s for `seconds` once `clients` subscribed."""
    import uvicorn

    from papertrade.app import create_app
    from papertrade.config import Settings
    from papertrade.market.sim import SimFeed

    settings = Settings(
        var_dir=var,
        database_url=f"sqlite+aiosqlite:///{var}/bench.db",
        secret_key="bench",
        public_base_url="http://127.0.0.1",
        market_source="sim",
        sim_tick_ms=60_000,  # the sim's own ticks stay out of the measurement
        ws_flush_ms=flush_ms,
        ws_heartbeat_s=3600,
        rate_limit_api_key_per_min=100_000,
        # thousands of sockets of one key: the free tier's request budget refused them after 310
        tiers_enforced=False,
    )
    app = create_app(settings)

    async def publish() -> None:
        ctx = app.state.ctx
        while getattr(app.state, "realtime", None) is None or ctx.market is None:  # noqa: ASYNC110
            await asyncio.sleep(0.1)
        realtime = app.state.realtime
        assert realtime is not None
        assert isinstance(ctx.market, SimFeed)
        topic = f"mark_price:{SYMBOL}"
        if binance:
            streams = app.state.binance_streams
            hub, topics = streams.hub, ["r:" + DEPTH.lower(), "r:" + MARKS.lower()]
        else:
            hub, topics = realtime.hub, [topic]
        while sum(len(hub.topics.get(t, ())) for t in topics) < clients:  # noqa: ASYNC110
            await asyncio.sleep(0.05)
        period = 1 / rate
        due = time.perf_counter()
        price = 60_000
        end = due + seconds
        while due < end:
            due += period
            delay = due - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            price = 60_000 + (price - 59_999) % 1000  # stay on the tick, keep changing
            await ctx.market.set_price(SYMBOL, price)

    async def main() -> None:
        config = uvicorn.Config(
            app,
            host="127.0.0.1",
            port=port,
            log_level="warning",
            ws="websockets-sansio",
            backlog=4096,
        )
        server = uvicorn.Server(config)
        publisher = asyncio.create_task(publish())
        await server.serve()
        publisher.cancel()

    import uvloop

    uvloop.run(main())


# -- load generator ----------------------------------------------------------------------------


class Counter:
    frames = 0
    latencies: ClassVar[list[float]] = []
    marks: ClassVar[list[float]] = []  # --binance: !markPrice@arr@1s (latencies: the depth)


def _masked_text(payload: bytes) -> bytes:
    mask = os.urandom(4)
    body = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
    size = len(payload)
    head = bytes((0x81, 0x80 | size)) if size < 126 else bytes((0x81, 0xFE)) + size.to_bytes(2)
    return head + mask + body


class Client(asyncio.Protocol):
    """Handshake, subscribe, then count frames (and parse them when sampled)."""

    def __init__(
        self, key: str, sampled: bool, ready: asyncio.Future[None], stream: str | None = None
    ):
        self.key = key
        self.sampled = sampled
        self.ready = ready
        self.buffer = b""
        self.open = False
        self.stream = stream  # --binance: the raw stream of its path, no subscribe message

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        writer: Any = transport  # uvloop's transports are not asyncio.Transport
        self.transport = writer
        nonce = base64.b64encode(os.urandom(16)).decode()
        path = f"/ws/{self.stream}" if self.stream else "/v1/ws"
        auth = "" if self.stream else f"Authorization: Bearer {self.key}\r\n"
        writer.write(
            (
                f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
                f"Connection: Upgrade\r\nSec-WebSocket-Key: {nonce}\r\n"
                f"Sec-WebSocket-Version: 13\r\n{auth}\r\n"
            ).encode()
        )

    def data_received(self, data: bytes) -> None:
        buffer = self.buffer + data
        if not self.open:
            end = buffer.find(b"\r\n\r\n")
            if end < 0:
                self.buffer = buffer
                return
            if not buffer.startswith(b"HTTP/1.1 101"):
                raise SystemExit(f"upgrade refused: {buffer[:200]!r}")
            self.open = True
            buffer = buffer[end + 4 :]
            if self.stream:
                self.ready.set_result(None)  # subscribed by its path
            else:
                message = {"op": "subscribe", "channels": [f"mark_price:{SYMBOL}"], "id": 1}
                self.transport.write(_masked_text(orjson.dumps(message)))
        pos, size, frames = 0, len(buffer), 0
        now_ms = time.time() * 1000
        while size - pos >= 2:
            length, head = buffer[pos + 1] & 0x7F, 2
            if length == 126:
                if size - pos < 4:
                    break
                length, head = int.from_bytes(buffer[pos + 2 : pos + 4]), 4
            elif length == 127:
                if size - pos < 10:
                    break
                length, head = int.from_bytes(buffer[pos + 2 : pos + 10]), 10
            if size - pos < head + length:
                break
            payload = buffer[pos + head : pos + head + length]
            if b'"type":"subscribed"' in payload and not self.ready.done():
                self.ready.set_result(None)
            elif self.sampled:
                _sample(payload, now_ms)
            frames += 1
            pos += head + length
        Counter.frames += frames
        self.buffer = buffer[pos:]


def _sample(payload: bytes, now_ms: float) -> None:
    """The latency of one message of a sampled connection."""
    if payload.startswith(b'{"channel":"mark_price'):
        Counter.latencies.append(now_ms - orjson.loads(payload)["time"])
    elif payload.startswith(b'{"e":"depthUpdate"'):
        Counter.latencies.append(now_ms - orjson.loads(payload)["T"])
    elif payload.startswith(b'[{"e":"markPriceUpdate"'):
        Counter.marks.append(now_ms - orjson.loads(payload)[0]["E"])


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def _api_key(base: str) -> str:
    async with httpx.AsyncClient(base_url=base, timeout=30) as http:
        origin = {"Origin": "http://127.0.0.1"}
        signup = await http.post(
            "/v1/auth/signup",
            json={"email": "bench@example.com", "password": "bench-pass"},
            headers=origin,
        )
        signup.raise_for_status()
        csrf = {"X-CSRF-Token": http.cookies.get("csrf_token") or "", **origin}
        created = await http.post(
            "/v1/user/api-keys", json={"note": "bench", "scope": "read"}, headers=csrf
        )
        created.raise_for_status()
        return str(created.json()["key"])


async def measure(
    port: int, server_pid: int, clients: int, seconds: float, binance: bool = False
) -> dict[str, Any]:
    key = "" if binance else await _api_key(f"http://127.0.0.1:{port}")
    loop = asyncio.get_running_loop()
    ready = []
    for i in range(clients):
        done: asyncio.Future[None] = loop.create_future()
        stream = (DEPTH if i % 2 == 0 else MARKS) if binance else None
        await loop.create_connection(
            functools.partial(Client, key, i < SAMPLED, done, stream), "127.0.0.1", port
        )
        ready.append(done)
    for _ in range(600):
        if all(f.done() for f in ready):
            break
        await asyncio.sleep(0.1)
    else:
        raise SystemExit(f"only {sum(f.done() for f in ready)} of {clients} clients subscribed")
    await asyncio.sleep(1.0)  # warm-up: the publisher starts when the last client subscribed
    Counter.frames, Counter.latencies, Counter.marks = 0, [], []
    import gc

    gc.collect()
    gc.disable()  # the load generator's own pauses must not count as server latency
    cpu_server, cpu_client = _cpu_seconds(server_pid), time.process_time()
    started = time.perf_counter()
    await asyncio.sleep(seconds - 2)
    elapsed = time.perf_counter() - started
    frames, latencies, marks = Counter.frames, sorted(Counter.latencies), sorted(Counter.marks)
    cpu_server = _cpu_seconds(server_pid) - cpu_server
    cpu_client = time.process_time() - cpu_client
    gc.enable()

    def pct(q: float, values: list[float] = latencies) -> float:
        return values[min(len(values) - 1, int(q * len(values)))] if values else 0.0

    return {
        "delivered": frames / elapsed,
        "p50": pct(0.50),
        "p99": pct(0.99),
        "max": latencies[-1] if latencies else 0.0,
        "samples": len(latencies),
        "marks_p99": pct(0.99, marks),
        "marks_samples": len(marks),
        "server_cpu": cpu_server / elapsed,
        "client_cpu": cpu_client / elapsed,
        "us_per_msg": cpu_server / frames * 1e6 if frames else 0.0,
    }


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def run_one(
    clients: int, rate: float, seconds: float, flush_ms: float, binance: bool = False
) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="bench-ws-") as var:
        return _run_one(clients, rate, seconds, flush_ms, var, binance)


def _run_one(
    clients: int, rate: float, seconds: float, flush_ms: float, var: str, binance: bool = False
) -> dict[str, Any]:
    port = _free_port()
    child = subprocess.Popen(
        [
            sys.executable,
            __file__,
            "--serve",
            str(port),
            str(clients),
            str(rate),
            str(seconds + 3),
            str(flush_ms),
            var,
            "binance" if binance else "native",
        ],
    )
    try:
        deadline = time.time() + 60
        while True:
            try:
                httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).raise_for_status()
                break
            except httpx.HTTPError:
                if time.time() > deadline or child.poll() is not None:
                    raise SystemExit("the server did not start") from None
                time.sleep(0.2)
        import uvloop

        return uvloop.run(measure(port, child.pid, clients, seconds, binance))
    finally:
        child.send_signal(signal.SIGTERM)
        try:
            child.wait(10)
        except subprocess.TimeoutExpired:
            child.kill()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--clients", type=int, default=1000)
    parser.add_argument("--rates", default="50,100,200")
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--flush-ms", default="0")
    parser.add_argument(
        "--binance", action="store_true", help=f"clients on {DEPTH} and {MARKS} (docs/fapi-ws.md)"
    )
    args = parser.parse_args()
    cpu = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        ),
        platform.processor(),
    )
    print(
        f"machine: {os.cpu_count()} cores, {cpu}, Python {platform.python_version()}; "
        f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}"
    )
    print(f"command: {' '.join(sys.argv)}")
    print(
        "server: the app under uvicorn (uvloop, websockets-sansio), 1 process; client: 1 "
        f"process of raw asyncio sockets, {SAMPLED} of them parsing JSON for latency\n"
    )
    if args.binance:
        print(f"streams: half the clients on /ws/{DEPTH}, half on /ws/{MARKS}; p50/p99/max are")
        print(f"the depth diffs' (receive time - T), 'marks p99' the {MARKS} arrays' (- E)\n")
    marks_head = " marks p99 ms |" if args.binance else ""
    print(
        "| clients | marks/s published | flush_ms | messages/s delivered | p50 ms | p99 ms "
        f"| max ms |{marks_head} server CPU | server µs/msg | client CPU |"
    )
    print(
        "|---:|---:|---:|---:|---:|---:|---:|"
        + ("---:|" if args.binance else "")
        + "---:|---:|---:|"
    )
    for flush_ms in (float(f) for f in args.flush_ms.split(",")):
        for rate in (float(r) for r in args.rates.split(",")):
            r = run_one(args.clients, rate, args.seconds, flush_ms, args.binance)
            marks = f" {r['marks_p99']:.1f} |" if args.binance else ""
            print(
                f"| {args.clients} | {rate:g} | {flush_ms:g} | {r['delivered']:,.0f} "
                f"| {r['p50']:.1f} | {r['p99']:.1f} | {r['max']:.1f} |{marks} "
                f"{r['server_cpu']:.0%} | {r['us_per_msg']:.1f} | {r['client_cpu']:.0%} |",
                flush=True,
            )
    print(f"\nload average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--serve":
        port, clients, rate, seconds, flush_ms, var, mode = sys.argv[2:9]
        serve(
            int(port),
            int(clients),
            float(rate),
            float(seconds),
            float(flush_ms),
            Path(var),
            binance=mode == "binance",
        )
    else:
        main()
