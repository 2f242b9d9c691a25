"""The per-address budget of traffic no credential vouches for (/v1, the legacy prefix, /webhook).

A request made with an accepted API key, session or webhook token is charged to that credential
(auth/v1.py, webhooks). Every other request is charged to its client address (auth/client_ip.py),
RATE_LIMIT_UNAUTHENTICATED_IP_PER_MIN a minute, shared through Redis when configured:

- a request without any credential: charged before it runs, and refused (429) before any work
  once the budget is spent;
- a request whose credential is refused (unknown or revoked key, dead session, unknown webhook
  token), or whose credential a public endpoint did not need and that turns out not to be live:
  charged when its answer is ready, and that answer becomes the 429 once the budget is spent.
  A caller with a valid credential is thus never refused for what others at its address do.

Sign-in and sign-up have budgets of their own (users/throttle.py); /fapi charges addresses its
own weight (fapi/auth.py).
"""

from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from papertrade.auth.client_ip import client_key
from papertrade.auth.cookies import SESSION_COOKIE
from papertrade.auth.v1 import REFUSED, VOUCHED, is_known_caller
from papertrade.context import AppContext
from papertrade.kit.ratelimit import Usage
from papertrade.kit.responses import native_error
from papertrade.surfaces import is_fapi_path

WINDOW_S = 60
OWN_BUDGETS = ("/auth/login", "/auth/signup")


class AddressBudgetMiddleware:
    def __init__(self, app: ASGIApp, ctx: AppContext):
        self.app = app
        self.ctx = ctx

    def _surface(self, path: str) -> str | None:
        """ "webhook" or "api" when the path is budgeted here, else None."""
        if path.startswith("/webhook/"):
            return "webhook"
        for prefix in ("/v1", self.ctx.settings.legacy_prefix):
            if path.startswith(prefix + "/"):
                rest = path[len(prefix) :]
                if rest.startswith("/webhook/"):
                    return "webhook"
                if rest in OWN_BUDGETS or is_fapi_path(path, self.ctx.settings):
                    return None
                return "api"
        return None

    async def _charge(self, scope: Scope) -> Usage:
        key = f"ip:{client_key(scope, self.ctx.settings)}"
        limit = self.ctx.settings.rate_limit_unauthenticated_ip_per_min
        return await self.ctx.limiter.hit(key, limit, WINDOW_S)

    def _refusal(self, usage: Usage) -> ASGIApp:
        limit = self.ctx.settings.rate_limit_unauthenticated_ip_per_min
        return native_error(
            429,
            "rate_limited",
            f"Too many requests without valid credentials from your address ({limit} a minute); "
            f"retry in {usage.retry_after} s, or sign in or send a valid API key.",
            {"Retry-After": str(usage.retry_after)},
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        surface = self._surface(scope["path"]) if scope["type"] == "http" else None
        if surface is None:
            await self.app(scope, receive, send)
            return
        state = scope.setdefault("state", {})
        if surface == "api" and not _sends_credential(scope):
            usage = await self._charge(scope)
            if not usage.allowed:
                await self._refusal(usage)(scope, receive, send)
                return
            await self.app(scope, receive, send)
            return
        replaced = False

        async def checked(message: Message) -> None:
            nonlocal replaced
            if message["type"] == "http.response.start":
                if await self._unvouched(scope, state, surface):
                    usage = await self._charge(scope)
                    if not usage.allowed:
                        replaced = True
                        await self._refusal(usage)(scope, receive, send)
                        return
            elif replaced:
                return  # the body of the answer the 429 replaced
            await send(message)

        await self.app(scope, receive, checked)

    async def _unvouched(self, scope: Scope, state: dict[str, object], surface: str) -> bool:
        if state.get(VOUCHED):
            return False
        if state.get(REFUSED) or surface == "webhook":
            return True
        return not await is_known_caller(Request(scope))  # a public read sent with credentials


def _sends_credential(scope: Scope) -> bool:
    for name, value in scope["headers"]:
        if name == b"authorization":
            return True
        if name == b"cookie" and f"{SESSION_COOKIE}=".encode() in value:
            return True
    return False
