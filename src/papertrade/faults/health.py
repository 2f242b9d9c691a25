"""/healthz: each dependency's state, and 503 when this process cannot serve correctly.

503 (take the process out of the load balancer): the database does not answer, its storage is
full, or another process holds the database in a way this one cannot share (faults/sole.py).
200 with "status": "degraded": Redis is away (budgets per process, WebSocket clients told to
resynchronise) or market data is stale (orders are refused with market_data_stale); the
process still serves correctly what it can.
"""

import asyncio
import shutil
from pathlib import Path
from typing import Any

from sqlalchemy import text
from sqlalchemy.engine import make_url
from starlette.responses import Response

from papertrade.context import AppContext
from papertrade.faults.sole import SoleProcessGuard
from papertrade.kit.responses import NativeJSONResponse

CHECK_TIMEOUT_S = 2.0
MIN_FREE_BYTES = 1 << 20  # below this, SQLite may fail any write


async def report(ctx: AppContext, guard: SoleProcessGuard | None) -> Response:
    checks: dict[str, str] = {"database": await _database(ctx)}
    if ctx.db.is_sqlite:
        checks["disk"] = _disk(ctx)
    checks["redis"] = await _redis(ctx)
    checks["market"] = _market(ctx)
    if guard is not None:
        checks["processes"] = "ok" if guard.problem is None else "conflict"
    failure = _failure(checks, guard)
    if failure is not None:
        code, msg = failure
        body: dict[str, Any] = {"error": code, "msg": msg, "status": "down", **checks}
        return NativeJSONResponse(body, status_code=503, headers={"Retry-After": "5"})
    healthy = all(value in {"ok", "unused"} for value in checks.values())
    return NativeJSONResponse({"status": "ok" if healthy else "degraded", **checks})


def _failure(checks: dict[str, str], guard: SoleProcessGuard | None) -> tuple[str, str] | None:
    if checks["database"] != "ok":
        return "database_unavailable", f"Database check failed: {checks['database']}"
    if checks.get("disk") == "full":
        return "storage_full", "The storage of the database is full."
    if guard is not None and guard.problem is not None:
        return "service_unavailable", guard.problem
    return None


async def _database(ctx: AppContext) -> str:
    try:
        async with asyncio.timeout(CHECK_TIMEOUT_S), ctx.db.reader() as session:
            await session.execute(text("SELECT 1"))
    except Exception as exc:  # the answer must say "down", whatever the driver raised
        ctx.db.outages.failed(exc)
        return f"{type(exc).__name__}: {exc}".splitlines()[0][:200] or "unreachable"
    if ctx.db.outages.down_reason != "storage is full":  # only a write proves space is back
        ctx.db.outages.succeeded()
    return "ok"


def _disk(ctx: AppContext) -> str:
    if ctx.db.outages.down_reason == "storage is full":
        return "full"
    database = make_url(ctx.db.url).database
    folder = Path(database).resolve().parent if database else Path.cwd()
    try:
        free = shutil.disk_usage(folder).free
    except OSError:
        return "unknown"
    return "full" if free < MIN_FREE_BYTES else "ok"


async def _redis(ctx: AppContext) -> str:
    if ctx.redis is None:
        return "unused"
    try:
        async with asyncio.timeout(CHECK_TIMEOUT_S):
            await ctx.redis.ping()
    except Exception:  # unreachable, refused, timed out: the process falls back
        return "down"
    return "ok"


def _market(ctx: AppContext) -> str:
    if ctx.market is None:
        return "stopped"
    status = ctx.market.status()
    if status.get("stale"):
        return "stale"
    if status.get("silent"):  # connected, but nothing arrived for a few seconds
        return "silent"
    return "ok"
