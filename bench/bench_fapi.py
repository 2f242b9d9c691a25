"""/fapi benchmark: signed MARKET orders/s through /fapi/v1/order, and /fapi/v1/ping/s.

Run: .venv/bin/python bench/bench_fapi.py [--seconds 10] [--connections 32] [--rounds 3]

Starts the real `papertrade serve` (one uvicorn process, SQLite in a temporary var dir, simulated
market) and drives it with wrk (Debian package `wrk`) over pre-signed requests: every order has
its own newClientOrderId and signature, since the service refuses replays. Orders alternate BUY
and SELL 0.002 BTCUSDT so the position stays small. With two or more cores the server is pinned
to core 0 and wrk to core 1. Without wrk, a small asyncio keep-alive client is used instead.
Orders and pings alternate for several rounds and the ratio is taken per round, so that the
virtual machine's drift over a minute (often ±10 %) lands on both figures of a round alike.
"""

import argparse
import asyncio
import hashlib
import hmac
import os
import platform
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ORIGIN = "http://127.0.0.1"
LUA = r"""
local lines = {}
local counter = 1
local threads = {}
function setup(thread)
  thread:set("id", #threads)
  table.insert(threads, thread)
end
function init(args)
  local n = tonumber(args[2])
  local i = 0
  for line in io.lines(args[1]) do
    if i % n == id then table.insert(lines, line) end
    i = i + 1
  end
end
request = function()
  local path = lines[counter]
  counter = counter + 1
  if counter > #lines then counter = 1 end
  return wrk.format("POST", path, {["X-MBX-APIKEY"] = "API_KEY"}, "")
end
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def machine() -> str:
    cpu = "unknown CPU"
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        found = re.search(r"model name\s*:\s*(.+)", cpuinfo.read_text())
        cpu = found.group(1).strip() if found else cpu
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    return (
        f"{os.cpu_count()} × {cpu}, Python {platform.python_version()}, {platform.system()}; "
        f"load average before the run: {load}"
    )


def start_server(var_dir: Path, port: int, pin: bool) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "PAPERTRADE_VAR_DIR": str(var_dir),
        "PAPERTRADE_MARKET_SOURCE": "sim",
        "PAPERTRADE_SECRET_KEY": "bench-secret",
        "PAPERTRADE_PUBLIC_BASE_URL": f"{ORIGIN}:{port}",
        "PAPERTRADE_RATE_LIMIT_COMPAT_WEIGHT_PER_MIN": "100000000",
        "PAPERTRADE_RATE_LIMIT_COMPAT_ORDERS_PER_10S": "100000000",
        "PAPERTRADE_RATE_LIMIT_COMPAT_ORDERS_PER_MIN": "100000000",
    }
    serve = Path(sys.executable).parent / "papertrade"
    command = [str(serve), "serve", "--port", str(port), "--log-level", "warning"]
    if pin:
        command = ["taskset", "-c", "0", *command]
    log = (var_dir.parent / "server.log").open("wb")
    return subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)


async def wait_healthy(base: str) -> None:
    async with httpx.AsyncClient() as client:
        for _ in range(300):
            try:
                if (await client.get(f"{base}/healthz")).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            await asyncio.sleep(0.1)
    raise SystemExit("the server did not become healthy")


async def make_key(base: str) -> tuple[str, str]:
    """Sign up, create a well-funded portfolio and its compat key pair."""
    async with httpx.AsyncClient(base_url=base, headers={"Origin": base}) as client:
        signup = await client.post(
            "/v1/auth/signup", json={"email": "bench@example.com", "password": "bench-pass-1"}
        )
        signup.raise_for_status()
        csrf = {"X-CSRF-Token": client.cookies.get("csrf_token") or ""}
        portfolio = await client.post(
            "/v1/portfolios", json={"name": "bench", "initial_balance": "10000000"}, headers=csrf
        )
        portfolio.raise_for_status()
        key = await client.post(
            f"/v1/portfolios/{portfolio.json()['id']}/api-keys",
            json={"note": "bench"},
            headers=csrf,
        )
        key.raise_for_status()
        return key.json()["api_key"], key.json()["api_secret"]


def presign(api_secret: str, count: int, prefix: str = "") -> list[str]:
    """Connector-style order requests (everything in the query), each unique."""
    stamp = int(time.time() * 1000)
    lines = []
    for n in range(count):
        side = "BUY" if n % 2 == 0 else "SELL"
        query = (
            f"symbol=BTCUSDT&side={side}&type=MARKET&quantity=0.002&newClientOrderId=b{prefix}{n}"
            f"&recvWindow=60000&timestamp={stamp}"
        )
        sig = hmac.new(api_secret.encode(), query.encode(), hashlib.sha256).hexdigest()
        lines.append(f"/fapi/v1/order?{query}&signature={sig}")
    return lines


def run_wrk(
    url: str, seconds: int, connections: int, pin: bool, script: Path | None, args: list[str]
) -> dict[str, float]:
    command = ["wrk", "-t1", f"-c{connections}", f"-d{seconds}s", "--latency"]
    if script is not None:
        command += ["-s", str(script)]
    command += [url]
    if args:
        command += ["--", *args]
    if pin:
        command = ["taskset", "-c", "1", *command]
    out = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    total = int(re.search(r"(\d+) requests in", out).group(1))  # type: ignore[union-attr]
    elapsed = re.search(r"requests in ([\d.]+)(m?s)", out)
    assert elapsed is not None
    duration = float(elapsed.group(1)) / (1000 if elapsed.group(2) == "ms" else 1)
    bad = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    errors = int(bad.group(1)) if bad else 0
    p99 = re.search(r"99%\s+([\d.]+)(us|ms|s)", out)
    scale = {"us": 0.001, "ms": 1.0, "s": 1000.0}
    p99_ms = float(p99.group(1)) * scale[p99.group(2)] if p99 else float("nan")
    return {"ok": (total - errors) / duration, "errors": errors, "p99_ms": p99_ms}


async def asyncio_client(
    host: str, port: int, requests: list[bytes], seconds: float, connections: int
) -> dict[str, float]:
    """Fallback load generator: keep-alive connections, one request in flight each."""
    deadline = time.perf_counter() + seconds
    ok = errors = 0
    queue = iter(requests)

    async def worker() -> None:
        nonlocal ok, errors
        reader, writer = await asyncio.open_connection(host, port)
        while time.perf_counter() < deadline:
            request = next(queue, None)
            if request is None:
                break
            writer.write(request)
            head = await reader.readuntil(b"\r\n\r\n")
            length = int(re.search(rb"content-length: (\d+)", head.lower()).group(1))  # type: ignore[union-attr]
            await reader.readexactly(length)
            if head.startswith(b"HTTP/1.1 200"):
                ok += 1
            else:
                errors += 1
        writer.close()

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(connections)))
    return {"ok": ok / (time.perf_counter() - started), "errors": errors, "p99_ms": float("nan")}


def raw(method: str, path: str, port: int, api_key: str | None) -> bytes:
    key = f"X-MBX-APIKEY: {api_key}\r\n" if api_key else ""
    return (
        f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{key}Content-Length: 0\r\n\r\n"
    ).encode()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    pin = (os.cpu_count() or 1) >= 2 and shutil.which("taskset") is not None
    use_wrk = shutil.which("wrk") is not None
    port = free_port()
    base = f"{ORIGIN}:{port}"
    with tempfile.TemporaryDirectory() as tmp:
        server = start_server(Path(tmp) / "var", port, pin)
        try:
            asyncio.run(wait_healthy(base))
            api_key, api_secret = asyncio.run(make_key(base))
            rounds = []
            for round_no in range(args.rounds):
                requests = presign(api_secret, 6000 * args.seconds, prefix=f"r{round_no}-")
                rounds.append(measure(tmp, base, port, api_key, requests, args, pin, use_wrk))
            client = (
                f"wrk 4 (1 thread, {args.connections} connections)"
                if use_wrk
                else f"asyncio keep-alive client ({args.connections} connections)"
            )
        finally:
            server.send_signal(signal.SIGINT)
            server.wait(timeout=30)
    print(f"Machine: {machine()}")
    print(
        f"Server: `papertrade serve` (1 uvicorn process, SQLite WAL, sim market)"
        f"{', pinned to core 0' if pin else ''}"
    )
    print(
        f"Client: {client}{', pinned to core 1' if pin else ''}; {args.seconds} s per run, "
        f"orders then ping in each of {args.rounds} rounds\n"
    )
    print(
        "| round | signed MARKET `POST /fapi/v1/order`/s | non-2xx | p99 | `GET /fapi/v1/ping`/s "
        "| non-2xx | p99 | orders / ping |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    ratios = []
    for n, (orders, ping) in enumerate(rounds, 1):
        ratio = orders["ok"] / ping["ok"] if ping["ok"] else float("nan")
        ratios.append(ratio)
        print(
            f"| {n} | {orders['ok']:,.0f} | {orders['errors']:,.0f} | {orders['p99_ms']:.1f} ms "
            f"| {ping['ok']:,.0f} | {ping['errors']:,.0f} | {ping['p99_ms']:.1f} ms | {ratio:.2f} |"
        )
    rates = sorted(orders["ok"] for orders, _ in rounds)
    print(
        f"\nOrders/s: {rates[0]:,.0f}–{rates[-1]:,.0f} (target ≥ 1,500). Orders / ping, median "
        f"of the rounds: {statistics.median(ratios):.2f} (target ≥ 0.20)"
    )


def measure(
    tmp: str,
    base: str,
    port: int,
    api_key: str,
    requests: list[str],
    args: argparse.Namespace,
    pin: bool,
    use_wrk: bool,
) -> tuple[dict[str, float], dict[str, float]]:
    """One round: signed orders for `args.seconds`, then pings for as long."""
    if use_wrk:
        lines = Path(tmp) / "orders.txt"
        lines.write_text("\n".join(requests) + "\n")
        script = Path(tmp) / "orders.lua"
        script.write_text(LUA.replace("API_KEY", api_key))
        orders = run_wrk(base, args.seconds, args.connections, pin, script, [str(lines), "1"])
        ping = run_wrk(f"{base}/fapi/v1/ping", args.seconds, args.connections, pin, None, [])
        return orders, ping
    order_bytes = [raw("POST", r, port, api_key) for r in requests]
    orders = asyncio.run(
        asyncio_client("127.0.0.1", port, order_bytes, args.seconds, args.connections)
    )
    pings = [raw("GET", "/fapi/v1/ping", port, None)] * 2_000_000
    ping = asyncio.run(asyncio_client("127.0.0.1", port, pings, args.seconds, args.connections))
    return orders, ping


if __name__ == "__main__":
    main()
