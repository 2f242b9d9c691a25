"""The `papertrade` command: serve, worker, jobs, db upgrade."""

import argparse
import asyncio
import gc
import logging
from pathlib import Path
from typing import TYPE_CHECKING

from papertrade.config import get_settings
from papertrade.kit import logredact

if TYPE_CHECKING:
    from papertrade.chain.standalone import Result

KEEP_ALIVE_S = 65


def _serve(args: argparse.Namespace) -> None:
    # The collector stays off while the service imports and starts (its lifespan turns it back
    # on): the import builds some 400,000 long-lived objects, and the collector, run every 700
    # allocations, walked them again and again, 0.9 s of the 3.2 s of CPU an import took.
    gc.disable()
    import uvicorn

    from papertrade import workers

    settings = get_settings()
    if args.workers > 1 and settings.is_sqlite:
        raise SystemExit(
            "--workers > 1 needs PostgreSQL (PAPERTRADE_DATABASE_URL=postgresql+asyncpg://...): "
            "SQLite has a single writer."
        )
    if args.workers > 1 and not settings.redis_url:
        raise SystemExit(
            "--workers > 1 needs Redis: set PAPERTRADE_REDIS_URL (the processes share revoked "
            "keys, rate limits and WebSocket events through it)."
        )
    settings.var_dir.mkdir(parents=True, exist_ok=True)
    settings.resolved_secret_key()  # generated here, once, before any worker starts
    _say_sandbox()
    options = {
        "app": "papertrade.app:create_app",
        "factory": True,
        "host": args.host,
        "port": args.port,
        "log_level": args.log_level,
        # uvicorn believes X-Forwarded-For from the proxies the service trusts (auth/client_ip.py)
        # and from nobody else; left to itself it would believe any peer on 127.0.0.1.
        "proxy_headers": bool(settings.trusted_proxies),
        "forwarded_allow_ips": settings.trusted_proxies or None,
        # Longer than any common bot loop (freqtrade polls every 5 s, uvicorn's default keep-alive)
        # and than load balancers' 60 s, so a client never reuses a connection being closed.
        "timeout_keep_alive": KEEP_ALIVE_S,
    }
    if args.workers > 1 and workers.SUPPORTED:
        workers.run(options, args.workers)
    else:
        uvicorn.run(**options, workers=args.workers)


def _say_sandbox() -> None:
    """Whether this machine can isolate Python strategies, said at start (docs/strategies.md);
    a refusal is logged as a warning by isolation.status itself."""
    from papertrade.strategies.sandbox import isolation

    if not isolation.status():
        logging.getLogger("papertrade.strategies.sandbox").info(
            "Python strategies run isolated: own namespaces and uid, allow-list seccomp filter"
        )


def _db_upgrade(_args: argparse.Namespace) -> None:
    from papertrade import migrate
    from papertrade.db import Database

    async def run() -> None:
        settings = get_settings()
        settings.var_dir.mkdir(parents=True, exist_ok=True)
        db = Database(
            settings.database_url, settings.database_pool_size, settings.database_max_overflow
        )
        try:
            await migrate.upgrade(db.engine)
        finally:
            await db.dispose()

    asyncio.run(run())
    print("database is at the newest revision")  # noqa: T201


def _worker(_args: argparse.Namespace) -> None:
    from papertrade.jobs import worker

    settings = get_settings()
    refused = worker.refusal(settings)
    if refused is not None:
        raise SystemExit(refused)
    asyncio.run(worker.run(settings))


def _jobs(args: argparse.Namespace) -> None:
    from papertrade.jobs import report

    rows = asyncio.run(report.latest(get_settings(), args.limit, args.name))
    print(report.render(rows))  # noqa: T201


def _recharge(args: argparse.Namespace) -> None:
    from papertrade.recharge import operator

    if args.recharge_command == "unmatched":
        print(asyncio.run(operator.unmatched(get_settings())))  # noqa: T201
        return
    if (args.order is None) == (args.user is None):
        raise SystemExit("resolve: give exactly one of --order or --user")
    done = operator.resolve(
        get_settings(), args.transfer, by=args.by, order_id=args.order, user=args.user,
        note=args.note,
    )  # fmt: skip
    print(asyncio.run(done))  # noqa: T201


def _launch(args: argparse.Namespace) -> None:
    from papertrade.launch import operator

    if args.launch_command == "export-waitlist":
        print(asyncio.run(operator.export_waitlist(get_settings())))  # noqa: T201
        return
    if args.launch_command == "invite-waitlist":
        print(asyncio.run(operator.invite_waitlist(get_settings(), args.count)))  # noqa: T201
        return
    uses = None if args.uses == "unlimited" else _positive_id(args.uses)
    days = None if args.days == 0 else args.days
    made = operator.create_codes(
        get_settings(), count=args.count, max_uses=uses, days=days, note=args.note
    )
    print(asyncio.run(made))  # noqa: T201


def _feedback(args: argparse.Namespace) -> None:
    from papertrade.feedback import operator

    if args.feedback_command == "list":
        print(asyncio.run(operator.listing(get_settings(), args.status, args.limit)))  # noqa: T201
        return
    if args.feedback_command == "screenshot":
        written = operator.export_screenshot(get_settings(), args.id, Path(args.out))
        print(asyncio.run(written))  # noqa: T201
        return
    done = operator.answer(get_settings(), args.id, by=args.by, text=args.text)
    print(asyncio.run(done))  # noqa: T201


def _positive_id(text: str) -> int:
    if not (text.isascii() and text.isdigit() and 0 < int(text) < 2**31):
        raise argparse.ArgumentTypeError(f"{text!r}: give an id (a whole number, 1 or more)")
    return int(text)


def _verify(args: argparse.Namespace) -> None:
    from papertrade.chain import verify

    if args.url:  # the standalone script's checks: every failure is one line, never a traceback
        result = verify.published(args.url, args.code, args.public_key, args.timeout)
        print(result.render())  # noqa: T201
        if not result.ok:
            raise SystemExit(1)
        return
    # the same checks on the database's rows (docs/attestation.md); a failure is the last line,
    # `NOT VERIFIED: <the reason>`, never a traceback
    try:
        result = asyncio.run(_verify_stored(args.code, args.public_key))
    except (OSError, ValueError) as exc:  # the settings' key or database cannot be used
        print(f"NOT VERIFIED: {type(exc).__name__}: {exc}")  # noqa: T201
        raise SystemExit(1) from None
    print(result.render())  # noqa: T201
    if not result.ok:
        raise SystemExit(1)


async def _verify_stored(code: str, public_key: str | None) -> "Result":
    from papertrade.chain import verify
    from papertrade.chain.signing import attestation_key, public_hex
    from papertrade.context import AppContext

    settings = get_settings()
    ctx = AppContext.build(settings)
    try:
        return await verify.stored(ctx, code, public_key or public_hex(attestation_key(settings)))
    finally:
        await ctx.db.dispose()


def _process_count(text: str) -> int:
    count = int(text) if text.isdigit() else 0
    if count < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: give a whole number of processes, 1 or more")
    return count


def main(argv: list[str] | None = None) -> None:
    """Entry point of the console script."""
    parser = argparse.ArgumentParser(prog="papertrade", description="Paper trading service")
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve", help="run the service")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument("--workers", type=_process_count, default=1)
    serve.add_argument("--log-level", default="info")
    serve.set_defaults(handler=_serve)
    worker = commands.add_parser("worker", help="run background jobs from the Redis queue")
    worker.set_defaults(handler=_worker)
    jobs = commands.add_parser("jobs", help="show the latest background job runs")
    jobs.add_argument("--limit", type=_process_count, default=20, help="how many (newest first)")
    jobs.add_argument("--name", help="only this job, e.g. engine.settle_funding")
    jobs.set_defaults(handler=_jobs)
    recharge = commands.add_parser("recharge", help="USDT recharge: review unmatched transfers")
    recharge_commands = recharge.add_subparsers(dest="recharge_command", required=True)
    recharge_commands.add_parser("unmatched", help="list transfers that matched no order")
    resolve = recharge_commands.add_parser("resolve", help="credit an unmatched transfer")
    resolve.add_argument("transfer", type=_positive_id, help="the transfer's id (unmatched)")
    resolve.add_argument("--by", required=True, help="your name, recorded in the ledger")
    resolve.add_argument("--order", type=_positive_id, help="the order it pays (paid_late)")
    resolve.add_argument("--user", help="or credit this user (id or email)")
    resolve.add_argument("--note", default="", help="why, recorded in the ledger")
    recharge.set_defaults(handler=_recharge)
    launch = commands.add_parser("launch", help="invitation codes and the waitlist")
    launch_commands = launch.add_subparsers(dest="launch_command", required=True)
    codes = launch_commands.add_parser("create-codes", help="make invitation codes")
    codes.add_argument("--count", type=_positive_id, default=1)
    codes.add_argument("--uses", default="1", help="uses per code, or 'unlimited'")
    codes.add_argument("--days", type=int, default=14, help="days valid; 0 = never expires")
    codes.add_argument("--note", default="", help="what the codes are for")
    invite = launch_commands.add_parser("invite-waitlist", help="invite the first N waitlisters")
    invite.add_argument("count", type=_positive_id)
    launch_commands.add_parser("export-waitlist", help="the waitlist as CSV, in line order")
    launch.set_defaults(handler=_launch)
    feedback = commands.add_parser("feedback", help="read and answer users' feedback")
    feedback_commands = feedback.add_subparsers(dest="feedback_command", required=True)
    listed = feedback_commands.add_parser("list", help="oldest first")
    listed.add_argument("--status", choices=["open", "answered"], default="open")
    listed.add_argument("--limit", type=_positive_id, default=50)
    shot = feedback_commands.add_parser("screenshot", help="write one's screenshot to a PNG file")
    shot.add_argument("id", type=_positive_id)
    shot.add_argument("--out", required=True, help="the PNG file to write")
    answer = feedback_commands.add_parser("answer", help="answer one (it reaches the inbox)")
    answer.add_argument("id", type=_positive_id)
    answer.add_argument("--by", required=True, help="your name")
    answer.add_argument("--text", required=True)
    feedback.set_defaults(handler=_feedback)
    check = commands.add_parser(
        "verify", help="verify a portfolio's attested track record (docs/attestation.md)"
    )
    check.add_argument("code", help="the portfolio's code, e.g. P0000001")
    check.add_argument("--url", help="check the public API of this service instead of the database")
    check.add_argument(
        "--public-key", help="the attestation key to trust (hex), if not the service's"
    )
    check.add_argument(
        "--timeout", type=float, default=30, help="seconds to wait for each answer (with --url)"
    )
    check.set_defaults(handler=_verify)
    db = commands.add_parser("db", help="database maintenance")
    db_commands = db.add_subparsers(dest="db_command", required=True)
    db_commands.add_parser("upgrade", help="apply migrations").set_defaults(handler=_db_upgrade)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    logredact.install()
    args.handler(args)
