"""/fapi benchmark: signed MARKET orders/s through /fapi/v1/order, and /fapi/v1/ping/s.

Run: .venv/bin/python bench/bench_fapi.py [--seconds 10] [--rounds 3]

Starts the real `papertrade serve` (one uvicorn process, SQLite in a temporary var dir, simulated
market) on core 0 and drives it with wrk (Debian package `wrk`) on core 1 over pre-signed
requests: every order has its own newClientOrderId and signature, since the service refuses
replays. Orders alternate BUY and SELL 0.002 BTCUSDT so the position stays small. Orders and
pings alternate for several rounds and the ratio is taken per round, so that the virtual
machine's drift over a minute (often ±10 %) lands on both figures of a round alike.
"""

import argparse
import hashlib
import hmac
import statistics
import tempfile
import time
from pathlib import Path

import httpx
from server import machine, served, signup_with_key, wrk

CONNECTIONS = 32
# Each wrk request takes the next pre-signed path of the file (wrk's Lua runs on core 1).
ORDERS_LUA = r"""
local paths = {}
local counter = 1
function init(args)
  for line in io.lines(args[1]) do table.insert(paths, line) end
end
request = function()
  local path = paths[counter]
  counter = counter % #paths + 1
  return wrk.format("POST", path, {["X-MBX-APIKEY"] = "API_KEY"}, "")
end
"""


def compat_key(client: httpx.Client, portfolio_id: int) -> tuple[str, str]:
    """The portfolio's Binance-style key pair (what a bot is configured with)."""
    csrf = {"X-CSRF-Token": client.cookies.get("csrf_token") or ""}
    response = client.post(
        f"/v1/portfolios/{portfolio_id}/api-keys", json={"note": "bench"}, headers=csrf
    )
    response.raise_for_status()
    return response.json()["api_key"], response.json()["api_secret"]


def presign(api_secret: str, count: int, prefix: str) -> list[str]:
    """Connector-style order requests (everything in the query), each unique."""
    stamp = int(time.time() * 1000)
    paths = []
    for n in range(count):
        side = "BUY" if n % 2 == 0 else "SELL"
        query = (
            f"symbol=BTCUSDT&side={side}&type=MARKET&quantity=0.002&newClientOrderId={prefix}{n}"
            f"&recvWindow=60000&timestamp={stamp}"
        )
        sig = hmac.new(api_secret.encode(), query.encode(), hashlib.sha256).hexdigest()
        paths.append(f"/fapi/v1/order?{query}&signature={sig}")
    return paths


def accepted_per_second(result: dict[str, float]) -> float:
    """wrk's rate counts refusals too; only 2xx answers count here."""
    if not result["requests"]:
        return 0.0
    return result["rps"] * (1 - result["non2xx"] / result["requests"])


def measure_round(
    url: str, tmp: Path, api_key: str, api_secret: str, round_no: int, seconds: int
) -> tuple[dict[str, float], dict[str, float]]:
    """Signed orders for `seconds`, then pings for as long."""
    paths = tmp / "orders.txt"
    paths.write_text("\n".join(presign(api_secret, 6000 * seconds, f"r{round_no}-")) + "\n")
    script = tmp / "orders.lua"
    script.write_text(ORDERS_LUA.replace("API_KEY", api_key))
    orders = wrk(url, script, connections=CONNECTIONS, seconds=seconds, args=(str(paths),))
    ping = wrk(url + "/fapi/v1/ping", None, connections=CONNECTIONS, seconds=seconds)
    return orders, ping


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with served() as url, tempfile.TemporaryDirectory() as tmp:
        _, portfolio_id, client = signup_with_key(url, balance="10000000")
        api_key, api_secret = compat_key(client, portfolio_id)
        rounds = [
            measure_round(url, Path(tmp), api_key, api_secret, n, args.seconds)
            for n in range(args.rounds)
        ]
    print(f"Machine: {machine()}")
    print("Server: `papertrade serve` (1 uvicorn process, SQLite WAL, sim market) on core 0")
    print(
        f"Client: wrk (1 thread, {CONNECTIONS} connections) on core 1; {args.seconds} s per run, "
        f"orders then ping in each of {args.rounds} rounds\n"
    )
    print(
        "| round | signed MARKET `POST /fapi/v1/order`/s | non-2xx | p99 | `GET /fapi/v1/ping`/s "
        "| non-2xx | p99 | orders / ping |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    ratios, rates = [], []
    for n, (orders, ping) in enumerate(rounds, 1):
        rate, ping_rate = accepted_per_second(orders), accepted_per_second(ping)
        ratio = rate / ping_rate if ping_rate else float("nan")
        ratios.append(ratio)
        rates.append(rate)
        print(
            f"| {n} | {rate:,.0f} | {orders['non2xx']:,.0f} | {orders['p99']:.1f} ms "
            f"| {ping_rate:,.0f} | {ping['non2xx']:,.0f} | {ping['p99']:.1f} ms | {ratio:.2f} |"
        )
    print(
        f"\nOrders/s: {min(rates):,.0f}–{max(rates):,.0f} (target ≥ 1,500). Orders / ping, median "
        f"of the rounds: {statistics.median(ratios):.2f} (target ≥ 0.20)"
    )


if __name__ == "__main__":
    main()
