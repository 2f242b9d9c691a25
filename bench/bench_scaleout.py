"""Order throughput on PostgreSQL with one and with two API processes (issue 7, point 7).

For each process count: a fresh PostgreSQL database, Redis, `papertrade serve --workers N`;
MARKET orders through `POST /v1/order` and signed ones through `POST /fapi/v1/order`, each beside
the same run's cheap GET (`/v1/market/status`, `/fapi/v1/ping`). The orders go to 256 portfolios
in turn (one account's orders are serialised on its row lock, whatever the number of
processes; a deployment serves many accounts). On this 2-core machine the
server processes, PostgreSQL and wrk share both cores (nothing is pinned), so a second process
can only add what the first leaves idle; the 2-vs-1 ratio is the figure to watch.

Run: .venv/bin/python bench/bench_scaleout.py [postgresql+asyncpg://postgres@127.0.0.1:5432/test]
"""

import asyncio
import hashlib
import hmac
import json
import sys
import tempfile
import time
from pathlib import Path

import asyncpg
from server import machine, served, server_cpu_seconds, signup_with_key, wrk

PG = sys.argv[1] if len(sys.argv) > 1 else "postgresql+asyncpg://postgres@127.0.0.1:5432/test"
REDIS = "redis://127.0.0.1:6379/14"
ALL_CORES = "0,1"
SECONDS = 10
PORTFOLIOS = 256
# Each line of the file: "<header value, %20 for spaces> <path> <body>"; requests go round
# the lines in turn.
ROTATE_LUA = r"""
local lines = {}
local counter = 1
function init(args)
  for line in io.lines(args[1]) do
    local header, path, body = line:match("^(%S+) (%S+) ?(.*)$")
    table.insert(lines, {header:gsub("%%20", " "), path, body})
  end
end
request = function()
  local line = lines[counter]
  counter = counter % #lines + 1
  return wrk.format("POST", line[2], {[HEADER] = line[1], ["Content-Type"] = "application/json"},
                    line[3])
end
"""


def accounts(base: str) -> tuple[str, list[int], list[tuple[str, str]]]:
    """One user with a write key, PORTFOLIOS funded portfolios and a compat key pair for each."""
    key, first, client = signup_with_key(base)
    csrf = {"X-CSRF-Token": client.cookies.get("csrf_token") or ""}
    pids = [first]
    for n in range(PORTFOLIOS - 1):
        made = client.post(
            "/v1/portfolios",
            json={"name": f"bench {n}", "initial_balance": "100000000"},
            headers=csrf,
        )
        pids.append(made.raise_for_status().json()["id"])
    pairs = []
    for pid in pids:
        made = client.post(f"/v1/portfolios/{pid}/api-keys", json={"note": "b"}, headers=csrf)
        pairs.append((made.raise_for_status().json()["api_key"], made.json()["api_secret"]))
    return key, pids, pairs


def native_lines(key: str, pids: list[int]) -> list[str]:
    body = {"symbol": "BTCUSDT", "side": "buy", "type": "market", "quantity": "0.002"}
    return [f"Bearer%20{key} /v1/order {json.dumps(body | {'portfolio_id': p})}" for p in pids]


def fapi_lines(pairs: list[tuple[str, str]], count: int) -> list[str]:
    """Signed, each unique (replays are refused), spread over the portfolios' key pairs."""
    stamp = int(time.time() * 1000)
    lines = []
    for n in range(count):
        api_key, secret = pairs[n % len(pairs)]
        side = "BUY" if (n // len(pairs)) % 2 == 0 else "SELL"
        query = (
            f"symbol=BTCUSDT&side={side}&type=MARKET&quantity=0.002&newClientOrderId=b{n}"
            f"&recvWindow=60000&timestamp={stamp}"
        )
        sig = hmac.new(secret.encode(), query.encode(), hashlib.sha256).hexdigest()
        lines.append(f"{api_key} /fapi/v1/order?{query}&signature={sig}")
    return lines


def script(tmp: Path, name: str, header: str, lines: list[str]) -> tuple[Path, str]:
    data = tmp / f"{name}.txt"
    data.write_text("\n".join(lines) + "\n")
    lua = tmp / f"{name}.lua"
    lua.write_text(ROTATE_LUA.replace("HEADER", f'"{header}"'))
    return lua, str(data)


async def fresh_database(name: str) -> str:
    conn = await asyncpg.connect(PG.replace("postgresql+asyncpg://", "postgresql://"))
    try:
        await conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await conn.execute(f'CREATE DATABASE "{name}"')
    finally:
        await conn.close()
    return PG.rsplit("/", 1)[0] + f"/{name}"


def measure(workers: int, tmp: Path) -> list[tuple[str, dict[str, float], dict[str, float]]]:
    url = asyncio.run(fresh_database(f"papertrade_bench_{workers}"))
    env = {"PAPERTRADE_DATABASE_URL": url, "PAPERTRADE_REDIS_URL": REDIS}
    with served(env, workers=workers, cores=ALL_CORES) as base:
        time.sleep(2)  # every worker up (the health check reaches only one)
        key, pids, pairs = accounts(base)
        native, native_data = script(tmp, f"v1-{workers}", "Authorization", native_lines(key, pids))
        compat, compat_data = script(
            tmp, f"fapi-{workers}", "X-MBX-APIKEY", fapi_lines(pairs, 8000 * SECONDS)
        )
        wrk(base, native, seconds=3, cores=ALL_CORES, args=(native_data,))  # warm-up

        def run(target: str, lua: Path | None, data: str | None = None) -> dict[str, float]:
            """One wrk run, with the service's CPU per request (every process, every thread)."""
            before = server_cpu_seconds(base)
            args = (data,) if data else ()
            result = wrk(target, lua, seconds=SECONDS, cores=ALL_CORES, args=args)
            result["cpu_us"] = (server_cpu_seconds(base) - before) / result["requests"] * 1e6
            return result

        return [
            ("/v1", run(base, native, native_data), run(base + "/v1/market/status", None)),
            ("/fapi", run(base, compat, compat_data), run(base + "/fapi/v1/ping", None)),
        ]


def main() -> None:
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for workers in (1, 2):
            results[workers] = measure(workers, Path(tmp))
    print(f"Machine: {machine()}; PostgreSQL 15 and Redis on the same machine")
    print(f"wrk -t1 -c32 -d{SECONDS}s; nothing pinned\n")
    print(
        "| processes | orders via | orders/s | p50 ms | p99 ms | non-2xx | Python CPU per order "
        "| ping/s | orders/ping |"
    )
    print("|---:|---|---:|---:|---:|---:|---:|---:|---:|")
    for workers, rows in results.items():
        for surface, orders, ping in rows:
            print(
                f"| {workers} | {surface} | {orders['rps']:,.0f} | {orders['p50']:.1f} | "
                f"{orders['p99']:.1f} | {orders['non2xx']:.0f} | {orders['cpu_us']:.0f} µs | "
                f"{ping['rps']:,.0f} | {orders['rps'] / ping['rps']:.2f} |"
            )
    for index, surface in enumerate(("/v1", "/fapi")):
        one, two = results[1][index][1]["rps"], results[2][index][1]["rps"]
        print(f"\n{surface}: 2 processes / 1 process = {two / one:.2f} (target ≥ 1.6)")


if __name__ == "__main__":
    main()
