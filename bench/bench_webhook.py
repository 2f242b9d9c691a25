"""Alert webhook: alerts per second end to end, each answered only after its order has filled.

Run: .venv/bin/python bench/bench_webhook.py [--connections 16] [--seconds 10] [--portfolios 8]
     PAPERTRADE_BENCH_POSTGRES_URL=postgresql+asyncpg://postgres@127.0.0.1:5432/bench  (optional)

The server is the real app under uvicorn in a child process (simulated market, a throwaway SQLite
database, or the PostgreSQL database given). Each of `--portfolios` portfolios has a webhook
token; every alert is a distinct market order (its own idempotency key, so none is a duplicate),
buy and sell alternating. The sender is cheap: raw keep-alive HTTP/1.1 connections with
pre-built requests. A response counts only when it is 200 with status "executed" and the order
"filled", i.e. the alert was parsed, de-duplicated, recorded and its order filled and committed.
"""

import argparse
import asyncio
import os
import platform
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import orjson

ORIGIN = "http://127.0.0.1"


def serve(port: int, database_url: str, var: Path) -> None:
    import uvicorn
    import uvloop

    from papertrade.app import create_app
    from papertrade.config import Settings

    settings = Settings(
        var_dir=var,
        database_url=database_url or f"sqlite+aiosqlite:///{var}/bench.db",
        secret_key="bench",
        public_base_url=ORIGIN,
        market_source="sim",
        rate_limit_webhook_per_min=10**9,
        rate_limit_webhook_per_3min=10**9,
        rate_limit_session_per_min=10**6,
        rate_limit_api_key_per_min=10**9,
        tiers_enforced=False,  # one user with many portfolios, each with a webhook (free: one)
    )
    config = uvicorn.Config(create_app(settings), host="127.0.0.1", port=port, log_level="warning")
    uvloop.run(uvicorn.Server(config).serve())


async def _credentials(base: str, count: int) -> list[tuple[int, str, str]]:
    """(portfolio id, webhook token, API key) for `count` fresh portfolios."""
    async with httpx.AsyncClient(base_url=base, timeout=30) as http:
        signup = await http.post(
            "/v1/auth/signup",
            json={"email": f"bench-{time.time_ns()}@example.com", "password": "bench-pass"},
            headers={"Origin": ORIGIN},
        )
        signup.raise_for_status()
        headers = {"X-CSRF-Token": http.cookies.get("csrf_token") or "", "Origin": ORIGIN}
        made = []
        for n in range(count):
            portfolio = await http.post(
                "/v1/portfolios",
                json={"name": f"bench {n}", "initial_balance": 1_000_000},
                headers=headers,
            )
            portfolio.raise_for_status()
            pid = int(portfolio.json()["id"])
            hook = await http.post(f"/v1/portfolios/{pid}/webhook-tokens", headers=headers)
            hook.raise_for_status()
            key = await http.post(
                "/v1/user/api-keys", json={"note": f"bench {n}", "scope": "write"}, headers=headers
            )
            key.raise_for_status()
            made.append((pid, str(hook.json()["webhook_token"]), str(key.json()["key"])))
        return made


def _request(credential: tuple[int, str, str], n: int, kind: str) -> bytes:
    pid, token, key = credential
    side = "buy" if n % 2 == 0 else "sell"
    path, extra = f"/webhook/tv/{token}", ""
    if kind == "text":
        body = f"{side} BTCUSDT 0.002 idempotency_key=bench-{n}".encode()
        media = "text/plain"
    elif kind == "JSON":
        body = orjson.dumps(
            {"action": side, "symbol": "BTCUSDT", "qty": "0.002", "idempotency_key": f"bench-{n}"}
        )
        media = "application/json"
    else:  # the same order through the native REST API, for comparison
        body = orjson.dumps(
            {"portfolio_id": pid, "symbol": "BTCUSDT", "side": side, "quantity": "0.002"}
        )
        media, path, extra = "application/json", "/v1/order", f"Authorization: Bearer {key}\r\n"
    return (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: {media}\r\n{extra}"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode() + body


async def _sender(
    port: int,
    credential: tuple[int, str, str],
    ids: Any,
    kind: str,
    until: float,
    out: dict[str, Any],
) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        while time.perf_counter() < until:
            request = _request(credential, next(ids), kind)
            started = time.perf_counter()
            writer.write(request)
            head = await reader.readuntil(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n"):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            body = await reader.readexactly(length)
            elapsed = time.perf_counter() - started
            ok = head.startswith((b"HTTP/1.1 200", b"HTTP/1.1 201"))
            if ok and b'"filled"' in body and (kind == "REST" or b'"executed"' in body):
                out["ok"] += 1
                out["latencies"].append(elapsed)
            else:
                out["failed"] += 1
                out["last_failure"] = (head.split(b"\r\n")[0] + b" " + body[:200]).decode()
    finally:
        writer.close()


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def measure(
    port: int, pid: int, connections: int, seconds: float, portfolios: int, kind: str
) -> dict[str, Any]:
    import itertools

    credentials = await _credentials(f"http://127.0.0.1:{port}", portfolios)
    ids = itertools.count()
    out: dict[str, Any] = {"ok": 0, "failed": 0, "latencies": [], "last_failure": ""}
    warm = {"ok": 0, "failed": 0, "latencies": [], "last_failure": ""}
    until = time.perf_counter() + 1.0
    await asyncio.gather(
        *(_sender(port, credentials[i % portfolios], ids, kind, until, warm) for i in range(4))
    )
    cpu = _cpu_seconds(pid)
    started = time.perf_counter()
    until = started + seconds
    await asyncio.gather(
        *(
            _sender(port, credentials[i % portfolios], ids, kind, until, out)
            for i in range(connections)
        )
    )
    elapsed = time.perf_counter() - started
    cpu = _cpu_seconds(pid) - cpu
    latencies = sorted(out["latencies"])

    def pct(q: float) -> float:
        return float(latencies[min(len(latencies) - 1, int(q * len(latencies)))]) * 1000

    return {
        "rate": out["ok"] / elapsed,
        "p50": pct(0.5) if latencies else 0,
        "p99": pct(0.99) if latencies else 0,
        "failed": out["failed"],
        "last_failure": out["last_failure"],
        "server_cpu": cpu / elapsed,
    }


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def run_one(
    args: argparse.Namespace, connections: int, kind: str, database_url: str
) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="bench-webhook-") as var:
        return _run_one(args, connections, kind, database_url, var)


def _run_one(
    args: argparse.Namespace, connections: int, kind: str, database_url: str, var: str
) -> dict[str, Any]:
    port = _free_port()
    child = subprocess.Popen([sys.executable, __file__, "--serve", str(port), var, database_url])
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
        return asyncio.run(
            measure(port, child.pid, connections, args.seconds, args.portfolios, kind)
        )
    finally:
        child.send_signal(signal.SIGTERM)
        try:
            child.wait(10)
        except subprocess.TimeoutExpired:
            child.kill()
        if database_url:
            asyncio.run(_drop_postgres(database_url))


async def _drop_postgres(url: str) -> None:
    import asyncpg

    base, name = url.replace("postgresql+asyncpg://", "postgresql://").rsplit("/", 1)
    conn = await asyncpg.connect(f"{base}/postgres")
    try:
        await conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await conn.close()


async def _fresh_postgres(url: str) -> str:
    """Drop and create the database the URL names (through the `postgres` database)."""
    import asyncpg

    base, name = url.replace("postgresql+asyncpg://", "postgresql://").rsplit("/", 1)
    conn = await asyncpg.connect(f"{base}/postgres")
    try:
        await conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await conn.execute(f'CREATE DATABASE "{name}"')
    finally:
        await conn.close()
    return url


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--connections", default="16,1", help="comma-separated list")
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--portfolios", type=int, default=8)
    args = parser.parse_args()
    databases = [("SQLite", "")]
    pg = os.environ.get("PAPERTRADE_BENCH_POSTGRES_URL")
    if pg:
        databases.append(("PostgreSQL", pg))
    print(
        f"machine: {os.cpu_count()} cores, Python {platform.python_version()}; load average "
        f"before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}"
    )
    print(f"command: {' '.join(sys.argv)}")
    print(
        "server: the app under uvicorn, 1 process; sender: keep-alive connections over "
        f"{args.portfolios} portfolios (one webhook token and one API key each)\n"
    )
    print(
        "| database | request | connections | filled orders/s | p50 ms | p99 ms | failed "
        "| server CPU |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for connections in (int(c) for c in args.connections.split(",")):
        for name, url in databases:
            for kind in ("JSON", "text", "REST"):
                database_url = asyncio.run(_fresh_postgres(url)) if url else ""
                r = run_one(args, connections, kind, database_url)
                label = "POST /v1/order (baseline)" if kind == "REST" else f"webhook, {kind}"
                print(
                    f"| {name} | {label} | {connections} | {r['rate']:,.0f} | {r['p50']:.1f} "
                    f"| {r['p99']:.1f} | {r['failed']} | {r['server_cpu']:.0%} |",
                    flush=True,
                )
            if r["failed"]:
                print(f"  last failure: {r['last_failure']}")
    print(f"\nload average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--serve":
        serve(int(sys.argv[2]), sys.argv[4] if len(sys.argv) > 4 else "", Path(sys.argv[3]))
    else:
        main()
