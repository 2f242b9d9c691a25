"""The ASGI application: every surface over one domain core."""

import gc
import logging
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path

from fastapi import FastAPI
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.staticfiles import StaticFiles
from starlette.responses import HTMLResponse, Response

from papertrade import __version__, errorhandlers, migrate, openapi, v1
from papertrade.auth.ip_budget import AddressBudgetMiddleware
from papertrade.config import Settings, get_settings
from papertrade.context import AppContext
from papertrade.engine.engine import Engine
from papertrade.engine.leader import LeaderDuty, Leadership
from papertrade.fapi import routes as fapi_routes
from papertrade.fapi import wsapi as fapi_wsapi
from papertrade.fapi.stream import endpoints as fapi_stream_endpoints
from papertrade.fapi.stream import service as fapi_streams
from papertrade.faults import health
from papertrade.faults.middleware import DatabaseFaultMiddleware
from papertrade.faults.sole import SecondProcessRefused, SoleProcessGuard
from papertrade.jobs.catalogue import JOBS
from papertrade.jobs.runtime import Jobs
from papertrade.kit import logredact, security
from papertrade.kit.responses import NativeJSONResponse
from papertrade.kit.routescan import freeze_routing
from papertrade.live.jobs import enqueue_sends
from papertrade.mail.sender import MailSender
from papertrade.market.from_settings import feed_from_settings, shared_feed
from papertrade.middleware import (
    BodyLimitMiddleware,
    IdempotencyMiddleware,
    SecurityHeadersMiddleware,
    docs_csp,
)
from papertrade.orders.writer import OrderWriter
from papertrade.outbox.catalogue import CONSUMERS, CONTEXT_CONSUMERS
from papertrade.outbox.dispatcher import Consumer, Dispatcher
from papertrade.textguard import NulGuardMiddleware
from papertrade.tg.sender import TelegramSender
from papertrade.web import account_pages
from papertrade.web import routes as web_routes
from papertrade.web import track_record as track_record_page
from papertrade.webhooks import endpoints as webhook_endpoints
from papertrade.ws import service as ws_service

log = logging.getLogger("papertrade")
FRONTEND = Path(__file__).resolve().parents[2] / "frontend" / "node_modules"

DESCRIPTION = """Native REST API of Papertrade. Times are milliseconds since the epoch; USDT amounts
are JSON numbers with 6 decimals; every error is `{"error": "<code>", "msg": "<text>"}`.
Authenticate with `Authorization: Bearer <API_KEY>` or the web session cookie (writes then need
`X-CSRF-Token`). Writes accept an `Idempotency-Key` header (24 hours)."""


def create_app(
    settings: Settings | None = None, consumers: Sequence[Consumer] = CONSUMERS
) -> FastAPI:
    """Build the app; the lifespan applies migrations and starts the background parts.
    `consumers`: the outbox's consumers (tests add their own, or replace one of the context's
    by its name)."""
    settings = settings or get_settings()
    logredact.install()
    security.use_password_cost(settings.password_hash_time_cost, settings.password_hash_memory_kib)
    ctx = AppContext.build(settings)
    writer = OrderWriter(ctx)
    jobs = Jobs(ctx, JOBS)
    ctx.events.subscribe(enqueue_sends(jobs))  # mirrored orders (live/) go out as jobs
    built = (build(ctx) for build in CONTEXT_CONSUMERS)
    given = {consumer.name for consumer in consumers}  # a given one replaces its namesake
    consumers = [*consumers, *(consumer for consumer in built if consumer.name not in given)]
    dispatcher = Dispatcher(ctx, consumers, poll_s=settings.outbox_poll_s)
    # Without Redis one process per PostgreSQL database (faults/sole.py); SQLite is one process.
    guard = (
        None if ctx.db.is_sqlite else SoleProcessGuard(settings.database_url, ctx.redis is not None)
    )
    # Leader duties: one sender per deployment (docs/notifications.md, docs/email.md).
    telegram, mail = TelegramSender(ctx), MailSender(ctx)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if guard is not None:
            try:
                await guard.start()
            except SecondProcessRefused as exc:
                log.error("refusing to start: %s", exc)
                raise
        await migrate.upgrade(ctx.db.engine)
        upstream = await feed_from_settings(settings)
        # Scale-out with Redis: only the engine leader runs `upstream`; the others follow it.
        shared = shared_feed(settings, upstream, ctx.redis)
        ctx.market = shared or upstream
        realtime = await ws_service.start(ctx)  # before the engine: marks go out first on a tick
        app.state.binance_streams = await fapi_streams.start(ctx, realtime)
        await jobs.start()
        engine = Engine(ctx, jobs=jobs)
        # The leader alone runs the upstream feed, the job scheduler and the outbox's delivery.
        duties: list[LeaderDuty] = [jobs, dispatcher, telegram, mail]
        if shared is not None:
            duties.insert(0, shared)
        leadership = Leadership(ctx, engine, duties)
        app.state.realtime, app.state.engine = realtime, engine
        await leadership.start()
        await ctx.market.start()
        gc.collect()
        gc.freeze()  # start-up objects live forever; out of full collections, pauses stay short
        gc.enable()  # `papertrade serve` starts with it off (cli._serve)
        # An order allocates thousands of short-lived objects: at CPython's default (700) the
        # young generation is collected several times per request. 10,000 cut the Python per
        # order by about a tenth in bench_order_http_cpu.py; memory stays bounded (it is still
        # collected, only less often).
        gc.set_threshold(10_000, 10, 10)
        try:
            yield
        finally:
            await app.state.binance_streams.stop()
            await realtime.stop()
            await writer.close()
            await leadership.stop()
            await jobs.stop()
            await ctx.market.stop()
            await ctx.close()
            if guard is not None:
                await guard.stop()

    app = FastAPI(
        title="Papertrade",
        version=__version__,
        description=DESCRIPTION,
        default_response_class=NativeJSONResponse,
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
        openapi_url="/v1/openapi.json",
        # No OpenTelemetry here; with it off FastAPI skips asking the providers on every request.
        telemetry={"tracing": False, "metrics": False, "logs": False},
    )
    app.state.ctx = ctx
    app.state.jobs = jobs
    app.state.orders = writer
    app.state.outbox = dispatcher
    app.state.telegram = telegram
    app.state.mail = mail
    errorhandlers.install(app)
    openapi.install(app)
    # /fapi first: it is one catch-all route per mount, so native requests pay two regex checks
    # while /fapi requests skip the scan of every native route.
    compatible = fapi_routes.build_router()
    app.include_router(compatible, prefix="/fapi", include_in_schema=False)
    app.include_router(
        compatible, prefix=f"{settings.legacy_prefix}/binance/fapi", include_in_schema=False
    )
    app.include_router(fapi_routes.build_foreign_router())  # /dapi, /sapi, …: "not supported"
    # Binance's WebSocket paths (/ws, /stream, /public, /market, /private), twice like /fapi.
    app.include_router(fapi_stream_endpoints.router)
    app.include_router(fapi_stream_endpoints.router, prefix=f"{settings.legacy_prefix}/binance")
    app.include_router(fapi_wsapi.router)  # Binance's WebSocket API: the REST endpoints by frame
    app.include_router(fapi_wsapi.router, prefix=f"{settings.legacy_prefix}/binance")
    native = v1.build_router()
    app.include_router(native, prefix="/v1")
    app.include_router(native, prefix=settings.legacy_prefix, include_in_schema=False)
    app.include_router(webhook_endpoints.root_router)
    _add_platform_routes(app, ctx, guard)
    app.include_router(account_pages.router)  # before the catch-alls of web_routes
    app.include_router(track_record_page.router)
    app.include_router(web_routes.router)
    app.add_middleware(IdempotencyMiddleware, ctx=ctx)
    app.add_middleware(NulGuardMiddleware, settings=settings)
    app.add_middleware(BodyLimitMiddleware, ctx=ctx)
    app.add_middleware(AddressBudgetMiddleware, ctx=ctx)  # before any body is read
    app.add_middleware(DatabaseFaultMiddleware, ctx=ctx)  # a database outage: 503, no traceback
    app.add_middleware(SecurityHeadersMiddleware, settings=settings)  # outermost: every answer
    freeze_routing(app)  # every route is in: what FastAPI re-checks per request, done once
    return app


def _add_platform_routes(app: FastAPI, ctx: AppContext, guard: SoleProcessGuard | None) -> None:
    @app.get("/healthz", include_in_schema=False)
    async def healthz() -> Response:
        return await health.report(ctx, guard)

    if (FRONTEND / "swagger-ui-dist").is_dir():
        app.mount("/static/vendor", StaticFiles(directory=FRONTEND), name="vendor")

    page = get_swagger_ui_html(
        openapi_url="/v1/openapi.json",
        title="Papertrade API",
        swagger_js_url="/static/vendor/swagger-ui-dist/swagger-ui-bundle.js",
        swagger_css_url="/static/vendor/swagger-ui-dist/swagger-ui.css",
        swagger_favicon_url="/static/vendor/swagger-ui-dist/favicon-32x32.png",
        # No badge from the public validator: the page loads nothing from elsewhere.
        swagger_ui_parameters={"validatorUrl": None},
    )
    csp = docs_csp(bytes(page.body))

    @app.get("/docs", include_in_schema=False)
    async def docs() -> HTMLResponse:
        return HTMLResponse(page.body, headers={"Content-Security-Policy": csp})
