"""MARKET orders per second through POST /v1/order on one process with SQLite, beside a trivial
GET of the same server (wrk -t1 -c32 on core 1, the server on core 0)."""

import json
import tempfile
from pathlib import Path

from server import machine, served, signup_with_key, wrk

ORDER_LUA = """
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer %(key)s"
wrk.body = '%(body)s'
"""
PING_LUA = 'wrk.method = "GET"\n'


def main() -> None:
    with served() as url:
        key, pid, _client = signup_with_key(url)
        body = json.dumps(
            {
                "portfolio_id": pid,
                "symbol": "BTCUSDT",
                "side": "buy",
                "type": "market",
                "quantity": "0.002",
            }
        )
        with tempfile.TemporaryDirectory() as tmp:
            order_script = Path(tmp) / "order.lua"
            order_script.write_text(ORDER_LUA % {"key": key, "body": body})
            ping_script = Path(tmp) / "ping.lua"
            ping_script.write_text(PING_LUA)
            wrk(url + "/v1/order", order_script, seconds=3)  # warm-up
            orders = wrk(url + "/v1/order", order_script)
            ping = wrk(url + "/v1/market/status", ping_script)
    print(f"Machine: {machine()}; server on core 0; client: wrk -t1 -c32 -d10s on core 1\n")
    print("| endpoint | requests/s | p50 ms | p99 ms | non-2xx |")
    print("|---|---:|---:|---:|---:|")
    print(
        f"| POST /v1/order (MARKET, SQLite, 1 process) | {orders['rps']:.0f} | "
        f"{orders['p50']:.1f} | {orders['p99']:.1f} | {orders['non2xx']:.0f} |"
    )
    print(
        f"| GET /v1/market/status (same server) | {ping['rps']:.0f} | {ping['p50']:.1f} | "
        f"{ping['p99']:.1f} | {ping['non2xx']:.0f} |"
    )
    print(f"\nratio orders/ping: {orders['rps'] / ping['rps']:.2f}")


if __name__ == "__main__":
    main()
