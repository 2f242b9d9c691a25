"""The web application: server-rendered page shells and our own static files, mounted at /.

Each page is a small HTML shell; its ES module (web/static/js/pages/) reads and writes everything
through the native /v1 API with the session cookie, so the app holds no business rules. The
server only decides who may see a shell: /app/* needs a signed-in session (else a redirect to
/login), and a portfolio page needs the signed-in owner (else 404), checked with the same
services the API uses.
"""

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

from fastapi import APIRouter, Request
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates
from starlette.responses import RedirectResponse, Response

from papertrade import __version__
from papertrade.auth.principal import Principal
from papertrade.auth.v1 import session_principal
from papertrade.context import AppContext
from papertrade.errors import NotFound
from papertrade.kit.ids import is_id
from papertrade.portfolios import service as portfolio_service
from papertrade.strategies import reference as strategy_reference
from papertrade.strategies import service as strategy_service
from papertrade.users import service as user_service

HERE = Path(__file__).resolve().parent
STATIC_DIR = HERE / "static"
TEMPLATES = Jinja2Templates(directory=HERE / "templates")
STATIC = StaticFiles(directory=STATIC_DIR)

# Same-origin only: our own modules and the vendored chart library; no inline script at all.
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; connect-src 'self'; font-src 'self'; object-src 'none'; "
    "base-uri 'self'; form-action 'self'; frame-ancestors 'none'"
)

router = APIRouter(include_in_schema=False)
# HEAD answers as GET does, without the body (a link checker's or a monitor's HEAD is not a 405).
PAGE_METHODS = ["GET", "HEAD"]


def _ctx(request: Request) -> AppContext:
    ctx: AppContext = request.app.state.ctx
    return ctx


async def _viewer(request: Request) -> tuple[Principal, str] | None:
    """The signed-in session's principal and the user's email, or None when signed out."""
    ctx = _ctx(request)
    found = await session_principal(ctx, request)
    if found is None:
        return None
    principal = found[0]
    async with ctx.db.reader() as session:
        user = await user_service.get_user(session, principal.user_id)
    return principal, user.email


def _page(
    request: Request,
    template: str,
    *,
    title: str,
    script: str | None,
    viewer: tuple[Principal, str] | None,
    status_code: int = 200,
    **context: Any,
) -> Response:
    response = TEMPLATES.TemplateResponse(
        request,
        template,
        {
            "title": title,
            "script": script,
            "email": viewer[1] if viewer else None,
            "nav": request.url.path,
            "app_version": __version__,  # the feedback dialog sends it with each message
            **context,
        },
        status_code=status_code,
    )
    response.headers["Content-Security-Policy"] = CSP
    response.headers["Cache-Control"] = "no-store"
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Referrer-Policy"] = "same-origin"
    if request.method == "HEAD":  # the same status and headers, no body
        return Response(status_code=response.status_code, headers=dict(response.headers))
    return response


def _to_login(request: Request) -> Response:
    target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    return RedirectResponse(f"/login?next={quote(target, safe='')}", status_code=303)


def _safe_next(value: str | None) -> str:
    """Only a local path may be a post-sign-in destination (no open redirect)."""
    if not value or not value.startswith("/") or value.startswith("//") or "\\" in value:
        return "/app"
    parts = urlsplit(value)
    return "/app" if parts.scheme or parts.netloc else value


def _not_found(request: Request, viewer: tuple[Principal, str] | None, what: str) -> Response:
    return _page(
        request,
        "not_found.html",
        title="Not found",
        script=None,
        viewer=viewer,
        status_code=404,
        what=what,
    )


@router.api_route("/", methods=PAGE_METHODS)
async def home(request: Request) -> Response:
    viewer = await _viewer(request)
    if viewer is not None:
        return RedirectResponse("/app", status_code=303)
    return _page(request, "home.html", title="Paper trading", script="home", viewer=None)


# What a public page's button wanted when it sent the visitor to sign in (`?reason=`): the sign-in
# and sign-up pages say it ("Sign in to follow this portfolio.") instead of the generic notice.
# A fixed list, so the page never repeats words taken from the address.
SIGN_IN_REASONS = {
    "follow-portfolio": "follow this portfolio",
    "follow-strategy": "follow this strategy's signals",
    "comment": "join the discussion",
    "copy-portfolio": "copy this portfolio",
}


@router.api_route("/login", methods=PAGE_METHODS)
async def login_page(
    request: Request, next: str | None = None, reason: str | None = None
) -> Response:
    return await _auth_page(request, "login", next, reason=reason)


@router.api_route("/signup", methods=PAGE_METHODS)
async def signup_page(
    request: Request, next: str | None = None, code: str | None = None, reason: str | None = None
) -> Response:
    """Sign-up; `?code=` pre-fills the invitation code (docs/launch.md)."""
    return await _auth_page(request, "signup", next, code, reason)


async def _auth_page(
    request: Request,
    mode: str,
    next_path: str | None,
    code: str | None = None,
    reason: str | None = None,
) -> Response:
    destination = _safe_next(next_path)
    if await _viewer(request) is not None:
        return RedirectResponse(destination, status_code=303)
    wanted = SIGN_IN_REASONS.get(reason or "")
    return _page(
        request,
        "auth.html",
        title="Sign in" if mode == "login" else "Create your account",
        script="auth",
        viewer=None,
        mode=mode,
        next_path=destination,
        reason=reason if wanted else None,
        wanted=wanted,
        refused=next_path is not None and destination != "/app",
        invite_code=(code or "")[:32],
        ask_invite=bool(code) or _ctx(request).settings.registration_mode != "open",
        registration_mode=_ctx(request).settings.registration_mode,
    )


# The signed-in pages that are only their template and its script (the page fetches its data):
# path, template, title, script. The others, with checks of their own, are functions below.
SIGNED_IN_PAGES = (
    ("/app", "dashboard.html", "Dashboard", "dashboard"),
    ("/app/strategies", "strategies.html", "Strategies", "strategies"),
    ("/app/settings/api-keys", "settings_keys.html", "API keys", "settings"),
    ("/app/inbox", "inbox.html", "Inbox", "inbox"),
    ("/app/wallet", "wallet.html", "Wallet", "wallet"),
    ("/app/live", "live.html", "Live accounts", "live"),  # and the kill switch (docs/live.md)
    ("/app/social", "social.html", "Copying & following", "social"),
    ("/app/social/subscribers", "subscribers.html", "My subscribers", "subscribers"),
    ("/app/profile", "profile.html", "Profile", "profile"),  # docs/profile.md
    ("/app/invitations", "invitations.html", "Invitations", "invitations"),  # docs/launch.md
)


def _signed_in_page(
    template: str, title: str, script: str
) -> Callable[[Request], Awaitable[Response]]:
    async def page(request: Request) -> Response:
        viewer = await _viewer(request)
        if viewer is None:
            return _to_login(request)
        return _page(request, template, title=title, script=script, viewer=viewer)

    return page


for _path, _template, _title, _script in SIGNED_IN_PAGES:
    router.add_api_route(_path, _signed_in_page(_template, _title, _script), methods=PAGE_METHODS)


@router.api_route("/app/portfolios/{portfolio_id}", methods=PAGE_METHODS)
async def portfolio_page(request: Request, portfolio_id: int) -> Response:
    viewer = await _viewer(request)
    if viewer is None:
        return _to_login(request)
    if not is_id(portfolio_id):  # past the id column's range: no such portfolio
        return _not_found(request, viewer, "portfolio")
    ctx = _ctx(request)
    try:
        async with ctx.db.reader() as session:
            portfolio = await portfolio_service.get_owned(session, viewer[0], portfolio_id)
    except NotFound:
        return _not_found(request, viewer, "portfolio")
    return _page(
        request,
        "portfolio.html",
        title=portfolio.name,
        script="portfolio",
        viewer=viewer,
        portfolio_id=portfolio.id,
        portfolio_name=portfolio.name,
        portfolio_code=portfolio.code,
        public_base_url=ctx.settings.public_base_url.rstrip("/"),
    )


@router.api_route("/app/strategies/{strategy_id}", methods=PAGE_METHODS)
async def strategy_page(request: Request, strategy_id: int) -> Response:
    """The editor, backtests and deployments of one strategy: its owner only (others: 404)."""
    viewer = await _viewer(request)
    if viewer is None:
        return _to_login(request)
    if not is_id(strategy_id):
        return _not_found(request, viewer, "strategy")
    try:
        async with _ctx(request).db.reader() as session:
            strategy = await strategy_service.get_owned(session, viewer[0], strategy_id)
    except NotFound:
        return _not_found(request, viewer, "strategy")
    return _page(
        request,
        "strategy.html",
        title=strategy.name,
        script="strategy",
        viewer=viewer,
        strategy_id=strategy.id,
        strategy_name=strategy.name,
        strategy_code=strategy.code,
        strategy_kind=strategy.kind,
        ref=strategy_reference.reference(),
    )


@router.api_route("/s/{code}", methods=PAGE_METHODS)
async def public_strategy(request: Request, code: str) -> Response:
    """A strategy by short code: the page reads GET /v1/strategies/by_code (public ones for
    anyone, a private one for its owner)."""
    viewer = await _viewer(request)
    if not code.isalnum() or len(code) > 20:
        return _not_found(request, viewer, "public strategy")
    try:  # public ones for anyone, a private one for its owner: others see a 404
        async with _ctx(request).db.reader() as session:
            await strategy_service.get_by_code(session, viewer[0] if viewer else None, code)
    except NotFound:
        return _not_found(request, viewer, "public strategy")
    return _page(
        request,
        "public_strategy.html",
        title=code.upper(),
        script="public_strategy",
        viewer=viewer,
        code=code.upper(),
    )


@router.api_route("/app/settings", methods=PAGE_METHODS)
async def settings_root() -> Response:
    return RedirectResponse("/app/settings/api-keys", status_code=303)


@router.api_route("/markets", methods=PAGE_METHODS)
async def markets(request: Request) -> Response:
    viewer = await _viewer(request)
    return _page(request, "markets.html", title="Markets", script="markets", viewer=viewer)


@router.api_route("/markets/{symbol}", methods=PAGE_METHODS)
async def market(request: Request, symbol: str) -> Response:
    viewer = await _viewer(request)
    if not symbol.isalnum() or len(symbol) > 30:
        return _not_found(request, viewer, "market")
    return _page(
        request,
        "market.html",
        title=symbol.upper(),
        script="market",
        viewer=viewer,
        symbol=symbol.upper(),
    )


@router.api_route("/tiers", methods=PAGE_METHODS)
async def tiers_page(request: Request) -> Response:
    """The tiers side by side (GET /v1/launch/tiers); signed in, choose one (asks first)."""
    viewer = await _viewer(request)
    return _page(request, "tiers.html", title="Tiers", script="tiers", viewer=viewer)


@router.api_route("/help/copying", methods=PAGE_METHODS)
async def help_copying(request: Request) -> Response:
    """The rules of copying, the revenue share and subscriptions, in short (for anyone)."""
    viewer = await _viewer(request)
    return _page(
        request, "help_copying.html", title="How copying works", script=None, viewer=viewer
    )


@router.api_route("/help/strategies", methods=PAGE_METHODS)
async def help_strategies(request: Request) -> Response:
    """The DSL and Python reference (for anyone), from the parser's and the sandbox's own
    definitions (strategies/reference.py)."""
    viewer = await _viewer(request)
    return _page(
        request,
        "help_strategies.html",
        title="Strategy reference",
        script=None,
        viewer=viewer,
        ref=strategy_reference.reference(),
    )


@router.api_route("/square", methods=PAGE_METHODS)
async def square(request: Request) -> Response:
    viewer = await _viewer(request)
    return _page(request, "square.html", title="Square", script="square", viewer=viewer)


@router.api_route("/p/{code}", methods=PAGE_METHODS)
async def public_portfolio(request: Request, code: str) -> Response:
    viewer = await _viewer(request)
    if not code.isalnum() or len(code) > 20:
        return _not_found(request, viewer, "public portfolio")
    try:  # a code that names no public portfolio is a 404, as GET …/{code}/public says
        async with _ctx(request).db.reader() as session:
            await portfolio_service.get_by_code(session, None, code)
    except NotFound:
        return _not_found(request, viewer, "public portfolio")
    return _page(
        request,
        "public_portfolio.html",
        title=code.upper(),
        script="public",
        viewer=viewer,
        code=code.upper(),
    )


@router.api_route("/waitlist", methods=PAGE_METHODS)
async def waitlist_page(request: Request, ref: str | None = None) -> Response:
    """Join the waitlist (`?ref=` fills in who referred you) or see your place in line."""
    return _page(
        request,
        "waitlist.html",
        title="Waitlist",
        script="waitlist",
        viewer=await _viewer(request),
        ref=(ref or "")[:32],
        verifying=False,
    )


@router.api_route("/waitlist/verify", methods=PAGE_METHODS)
async def waitlist_verify_page(request: Request) -> Response:
    """The e-mailed double opt-in link lands here; the page confirms with a POST (a mail
    scanner that only fetches the link confirms nothing)."""
    return _page(
        request,
        "waitlist.html",
        title="Confirm your place",
        script="waitlist",
        viewer=await _viewer(request),
        ref="",
        verifying=True,
    )


@router.api_route("/u/{user_id}", methods=PAGE_METHODS)
async def public_profile_page(request: Request, user_id: str) -> Response:
    """A user's public profile: name, avatar, bio, public portfolios and strategies."""
    viewer = await _viewer(request)
    if not (user_id.isascii() and user_id.isdigit() and len(user_id) < 20 and is_id(int(user_id))):
        return _not_found(request, viewer, "profile")
    return _page(
        request,
        "public_profile.html",
        title="Profile",
        script="public_profile",
        viewer=viewer,
        user_id=int(user_id),
    )


@router.api_route("/app/{rest:path}", methods=PAGE_METHODS)
async def app_not_found(request: Request, rest: str) -> Response:
    viewer = await _viewer(request)
    if viewer is None:
        return _to_login(request)
    return _not_found(request, viewer, "page")


@router.api_route("/static/app/{path:path}", methods=PAGE_METHODS)
async def static_file(request: Request, path: str) -> Response:
    """Our own CSS/JS/images; revalidated on every load (ETag), so a deploy shows at once."""
    response = await STATIC.get_response(path, request.scope)
    response.headers["Cache-Control"] = "no-cache"
    response.headers["X-Content-Type-Options"] = "nosniff"
    return response
