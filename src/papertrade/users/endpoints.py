"""/v1/auth/* and /v1/user."""

from fastapi import APIRouter, Request
from starlette.responses import Response

from papertrade.auth.client_ip import client_ip, client_key
from papertrade.auth.cookies import clear_session_cookies, set_session_cookies
from papertrade.auth.v1 import Caller, Ctx, WebUser
from papertrade.errors import Forbidden
from papertrade.kit.responses import NativeJSONResponse
from papertrade.kit.time import now_ms
from papertrade.launch import service as launch
from papertrade.tiers import limits as tier_limits
from papertrade.users import devices, service, throttle
from papertrade.users.events import SignedInFromNewDevice
from papertrade.users.schemas import SignIn, SignUp, UserRead

router = APIRouter(tags=["auth"])


def _check_origin(ctx: Ctx, request: Request) -> None:
    # Sign-in has no session yet, so no CSRF token; a browser's Origin still must be ours.
    origin = request.headers.get("origin")
    if origin is not None and origin.rstrip("/") not in ctx.settings.origins():
        raise Forbidden("Request origin is not allowed.", code="csrf_failed")


def _device(ctx: Ctx, request: Request) -> str:
    user_agent = request.headers.get("user-agent", "")
    return devices.device_hash(
        ctx.settings.resolved_secret_key(), user_agent, client_ip(request.scope, ctx.settings)
    )


async def _signed_in(ctx: Ctx, user_id: int, token: str, csrf: str, status: int) -> Response:
    async with ctx.db.reader() as session:
        user = await service.get_user(session, user_id)
    response = NativeJSONResponse(
        UserRead.model_validate(user).model_dump(mode="json"), status_code=status
    )
    set_session_cookies(response, ctx.settings, token, csrf)
    return response


@router.post("/auth/signup", status_code=201, response_model=UserRead)
async def signup(body: SignUp, request: Request, ctx: Ctx) -> Response:
    """Create an account and sign in (sets the session and csrf_token cookies). The email is
    kept in lower case; commonly used passwords are refused; 5 sign-ups an hour per address."""
    _check_origin(ctx, request)
    await throttle.charge_sign_up(ctx, client_key(request.scope, ctx.settings))
    async with ctx.transaction() as uow:
        user = await service.create_user(uow.session, body.email, body.password)
        await launch.admit(uow, ctx.settings.registration_mode, body.invite_code, user.id)
        token, csrf = await service.open_session(
            uow.session, user, ctx.settings.session_days, _device(ctx, request)
        )
    return await _signed_in(ctx, user.id, token, csrf, 201)


@router.post("/auth/login", response_model=UserRead)
async def login(body: SignIn, request: Request, ctx: Ctx) -> Response:
    """Sign in with email (any capitals) and password. Failed sign-ins are throttled per account
    and per address (429 with Retry-After). A sign-in from a device the account never signed in
    from puts a `security` notification in its inbox (docs/notifications.md)."""
    _check_origin(ctx, request)
    email = service.normalise_email(body.email)
    attempt = await throttle.begin_sign_in(ctx, email, client_key(request.scope, ctx.settings))
    device = _device(ctx, request)
    async with ctx.transaction() as uow:
        user = await service.authenticate(uow.session, email, body.password)
        if await devices.is_new(uow.session, user.id, device):
            described = devices.describe(request.headers.get("user-agent", ""))
            uow.emit(SignedInFromNewDevice(user_id=user.id, device=described))
        token, csrf = await service.open_session(
            uow.session, user, ctx.settings.session_days, device
        )
    await throttle.signed_in(ctx, attempt)
    return await _signed_in(ctx, user.id, token, csrf, 200)


@router.post("/auth/logout", status_code=200)
async def logout(principal: WebUser, ctx: Ctx) -> Response:
    """Sign out: the session is revoked server-side at once."""
    async with ctx.db.unit_of_work() as session:
        await service.revoke_session(session, principal.credential_id)
    response = NativeJSONResponse({"ok": True})
    clear_session_cookies(response, ctx.settings)
    return response


@router.get("/user", response_model=UserRead)
async def profile(principal: Caller, ctx: Ctx) -> UserRead:
    """The signed-in user's profile."""
    async with ctx.db.reader() as session:
        read = UserRead.model_validate(await service.get_user(session, principal.user_id))
        tier = await tier_limits.tier_of(session, principal.user_id, now_ms())
    return read.model_copy(update={"tier": tier.name})  # the tier in force (docs/tiers.md)
