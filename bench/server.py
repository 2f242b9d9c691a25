"""Start a real `papertrade serve` in a subprocess for benchmarks, and tear it down."""

import contextlib
import os
import platform
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


_SERVER_PIDS: dict[str, int] = {}  # base URL -> its `papertrade serve` process


def server_cpu_seconds(url: str) -> float:
    """CPU time used so far by the service at `url`: its process and every descendant (the
    workers of `--workers N`), every thread, user and system, from /proc."""
    ticks = 0
    pending = [_SERVER_PIDS[url]]
    while pending:
        pid = pending.pop()
        with contextlib.suppress(OSError):  # a process that ended meanwhile
            after_name = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            ticks += int(after_name[11]) + int(after_name[12])  # utime, stime
            for task in Path(f"/proc/{pid}/task").iterdir():
                pending += [int(child) for child in (task / "children").read_text().split()]
    return ticks / os.sysconf("SC_CLK_TCK")


@contextlib.contextmanager
def served(
    extra_env: dict[str, str] | None = None, workers: int = 1, cores: str = "0"
) -> Iterator[str]:
    """Yield the base URL of a fresh service (SQLite in a temp dir unless `extra_env` names a
    database, simulated market), its processes pinned to `cores`."""
    port = free_port()
    with tempfile.TemporaryDirectory() as var:
        env = {
            **os.environ,
            "PAPERTRADE_VAR_DIR": var,
            "PAPERTRADE_MARKET_SOURCE": "sim",
            "PAPERTRADE_TIERS_ENFORCED": "false",  # benchmarks use many portfolios per user
            "PAPERTRADE_PUBLIC_BASE_URL": f"http://127.0.0.1:{port}",
            "PAPERTRADE_RATE_LIMIT_API_KEY_PER_MIN": "100000000",
            "PAPERTRADE_RATE_LIMIT_SESSION_PER_MIN": "100000000",
            "PAPERTRADE_RATE_LIMIT_COMPAT_WEIGHT_PER_MIN": "100000000",
            "PAPERTRADE_RATE_LIMIT_COMPAT_ORDERS_PER_10S": "100000000",
            "PAPERTRADE_RATE_LIMIT_COMPAT_ORDERS_PER_MIN": "100000000",
            "PAPERTRADE_RATE_LIMIT_UNAUTHENTICATED_IP_PER_MIN": "100000000",  # anonymous GETs
            **(extra_env or {}),
        }
        command = [
            "taskset",
            "-c",
            cores,  # by default the server on core 0, the load generator on core 1
            str(Path(sys.executable).parent / "papertrade"),
            "serve",
            "--port",
            str(port),
            "--workers",
            str(workers),
            "--log-level",
            "warning",
        ]
        log = Path(var) / "server.log"
        with log.open("w") as out:
            process = subprocess.Popen(command, env=env, stdout=out, stderr=subprocess.STDOUT)
            url = f"http://127.0.0.1:{port}"
            _SERVER_PIDS[url] = process.pid
            try:
                for _ in range(300):
                    with contextlib.suppress(httpx.HTTPError):
                        if httpx.get(url + "/healthz", timeout=1).status_code == 200:
                            break
                    time.sleep(0.1)
                else:
                    raise RuntimeError("service did not start: " + log.read_text()[-2000:])
                yield url
            finally:
                process.terminate()
                process.wait(timeout=30)


def signup_with_key(url: str, balance: str = "100000000") -> tuple[str, int, httpx.Client]:
    """A new user with a write API key and a well-funded portfolio."""
    client = httpx.Client(base_url=url, headers={"Origin": url})
    email = f"bench-{time.time_ns()}@example.com"
    client.post("/v1/auth/signup", json={"email": email, "password": "benchmark-pass"})
    csrf = {"X-CSRF-Token": client.cookies.get("csrf_token") or ""}
    key = client.post("/v1/user/api-keys", json={"note": "bench", "scope": "write"}, headers=csrf)
    portfolio = client.post(
        "/v1/portfolios", json={"name": "bench", "initial_balance": balance}, headers=csrf
    )
    return key.json()["key"], portfolio.json()["id"], client


def machine() -> str:
    cpu = "unknown CPU"
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    system = f"{platform.system()} {platform.machine()}"
    return f"{system}, {os.cpu_count()} cores ({cpu}), Python {platform.python_version()}"


def load_average() -> str:
    """The machine's 1, 5 and 15 minute load averages: a figure is a result only on a quiet
    machine (BENCHMARKS.md)."""
    return " ".join(f"{v:.2f}" for v in os.getloadavg())


def wrk(
    url: str,
    script: Path | None,
    *,
    connections: int = 32,
    seconds: int = 10,
    cores: str = "1",
    args: tuple[str, ...] = (),
) -> dict[str, float]:
    """Run wrk (one thread) pinned to `cores`; returns requests/s and latency percentiles in ms."""
    command = [
        "taskset",
        "-c",
        cores,
        "wrk",
        "-t1",
        f"-c{connections}",
        f"-d{seconds}s",
        "--latency",
        *(["-s", str(script)] if script is not None else []),
        url,
        *(["--", *args] if args else []),
    ]
    output = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    return parse_wrk(output)


def parse_wrk(output: str) -> dict[str, float]:
    result: dict[str, float] = {"non2xx": 0.0, "requests": 0.0}
    for line in output.splitlines():
        parts = line.split()
        if " requests in " in line:
            result["requests"] = float(parts[0])
        elif line.startswith("Requests/sec:"):
            result["rps"] = float(parts[1])
        elif len(parts) == 2 and parts[0] in ("50%", "99%"):
            result["p" + parts[0].rstrip("%")] = _ms(parts[1])
        elif "Non-2xx" in line:
            result["non2xx"] = float(parts[-1])
    return result


def _ms(text: str) -> float:
    for unit, factor in (("us", 0.001), ("ms", 1.0), ("s", 1000.0)):
        if text.endswith(unit):
            return float(text[: -len(unit)]) * factor
    return float(text)
