"""ASGI middleware: request size limit, Idempotency-Key replay for /v1 writes, security headers."""

import base64
import hashlib
import json
import re
from decimal import MAX_EMAX, MIN_EMIN, Context, Decimal
from typing import Any
from urllib.parse import parse_qsl

from sqlalchemy import delete, select
from sqlalchemy.exc import IntegrityError
from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from papertrade.auth.cookies import SESSION_COOKIE
from papertrade.config import Settings
from papertrade.context import AppContext
from papertrade.kit.responses import native_error
from papertrade.kit.time import now_ms
from papertrade.models import IdempotencyRecord
from papertrade.surfaces import is_fapi_path

IDEMPOTENCY_TTL_MS = 24 * 3_600_000
WRITE_METHODS = {"POST", "PUT", "PATCH", "DELETE"}


class BodyTooLarge(Exception):
    """The request body passed the configured limit."""


# Paths that take an uploaded image as the body get a larger limit than MAX_BODY_BYTES (the
# image is checked by its own module: feedback/screenshot.py, profiles/avatar.py).
UPLOAD_PATH = re.compile(r"^/(?:feedback/[0-9]{1,19}/screenshot|user/avatar)$")
UPLOAD_MAX_BYTES = 2 * 1024 * 1024


def body_limit(scope: Scope, ctx: AppContext) -> int:
    path: str = scope["path"]
    if scope.get("method") == "PUT":
        for prefix in ("/v1", ctx.settings.legacy_prefix):
            if path.startswith(prefix + "/") and UPLOAD_PATH.match(path[len(prefix) :]):
                return max(ctx.settings.max_body_bytes, UPLOAD_MAX_BYTES)
    return ctx.settings.max_body_bytes


def too_large_response(scope: Scope, ctx: AppContext) -> Any:
    limit = body_limit(scope, ctx)
    if is_fapi_path(scope["path"], ctx.settings):
        from papertrade.fapi.errors import fapi_error

        return fapi_error(413, -1000, f"Request body is larger than {limit} bytes.")
    return native_error(413, "payload_too_large", f"Request body is larger than {limit} bytes.")


async def read_body(receive: Receive, limit: int) -> bytes:
    """The whole request body, refusing more than `limit` bytes."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise BodyTooLarge
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


def replaying(body: bytes) -> Receive:
    sent = False

    async def receive() -> Message:
        nonlocal sent
        if sent:
            return {"type": "http.disconnect"}
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return receive


class BodyLimitMiddleware:
    """Buffers each HTTP body up to the limit; an oversized body gets 413 in the surface's shape."""

    def __init__(self, app: ASGIApp, ctx: AppContext):
        self.app = app
        self.ctx = ctx

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] in ("GET", "HEAD", "OPTIONS"):
            await self.app(scope, receive, send)
            return
        headers = dict(scope["headers"])
        limit = body_limit(scope, self.ctx)
        declared = headers.get(b"content-length", b"0")
        try:
            too_big = int(declared) > limit
        except ValueError:
            too_big = True
        if too_big:
            await too_large_response(scope, self.ctx)(scope, receive, send)
            return
        try:
            body = await read_body(receive, limit)
        except BodyTooLarge:
            await too_large_response(scope, self.ctx)(scope, receive, send)
            return
        scope.setdefault("state", {})["raw_body"] = body
        await self.app(scope, replaying(body), send)


class IdempotencyMiddleware:
    """Replays the stored response of a /v1 write repeated with the same Idempotency-Key."""

    def __init__(self, app: ASGIApp, ctx: AppContext):
        self.app = app
        self.ctx = ctx

    def _applies(self, scope: Scope) -> bool:
        if scope["type"] != "http" or scope["method"] not in WRITE_METHODS:
            return False
        path: str = scope["path"]
        prefix = self.ctx.settings.legacy_prefix
        return path.startswith("/v1/") or (
            path.startswith(prefix + "/") and not is_fapi_path(path, self.ctx.settings)
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not self._applies(scope):
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        key = headers.get("idempotency-key")
        credential = headers.get("authorization") or _cookie(headers.get("cookie", ""))
        if not key or not credential:
            await self.app(scope, receive, send)
            return
        if len(key) > 255:
            await native_error(
                400, "invalid_idempotency_key", "Idempotency-Key is longer than 255 characters."
            )(scope, receive, send)
            return
        body = scope.get("state", {}).get("raw_body")
        if body is None:
            body = await read_body(receive, body_limit(scope, self.ctx))
        scope_hash = hashlib.sha256(credential.encode("latin-1")).hexdigest()
        digests = (
            request_fingerprint(scope, body, self.ctx.settings.legacy_prefix),
            # Records written by the release before (kept 24 hours) hold the raw bytes' digest.
            _raw_fingerprint(scope, body),
        )
        early = await self._claim(scope_hash, key, digests)
        if early is not None:
            await early(scope, receive, send)
            return
        await self._run_and_store(scope, body, send, scope_hash, key)

    async def _claim(self, scope_hash: str, key: str, digests: tuple[str, str]) -> Any:
        """Insert an in-flight record, or return the response that answers this repeat."""
        now = now_ms()
        try:
            async with self.ctx.db.unit_of_work() as session:
                record = await session.scalar(
                    select(IdempotencyRecord).where(
                        IdempotencyRecord.scope == scope_hash, IdempotencyRecord.key == key
                    )
                )
                if record is not None and record.expires_at <= now:
                    await session.delete(record)
                    await session.flush()
                    record = None
                if record is None:
                    session.add(
                        IdempotencyRecord(
                            scope=scope_hash,
                            key=key,
                            request_hash=digests[0],
                            expires_at=now + IDEMPOTENCY_TTL_MS,
                        )
                    )
                    return None
        except IntegrityError:
            return _in_flight()
        if record.request_hash not in digests:
            return native_error(
                422,
                "idempotency_key_reused",
                "This Idempotency-Key was already used with a different request; use a new key.",
            )
        if record.status_code is None:
            return _in_flight()
        from starlette.responses import Response

        return Response(
            record.response_body or b"",
            status_code=record.status_code,
            media_type=record.content_type,
            headers={"Idempotent-Replayed": "true"},
        )

    async def _run_and_store(
        self, scope: Scope, body: bytes, send: Send, scope_hash: str, key: str
    ) -> None:
        status = 500
        content_type: str | None = None
        chunks: list[bytes] = []

        async def capture(message: Message) -> None:
            nonlocal status, content_type
            if message["type"] == "http.response.start":
                status = message["status"]
                for name, value in message.get("headers", []):
                    if name.lower() == b"content-type":
                        content_type = value.decode("latin-1")
            elif message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))
            await send(message)

        try:
            await self.app(scope, replaying(body), capture)
        finally:
            async with self.ctx.db.unit_of_work() as session:
                match = (IdempotencyRecord.scope == scope_hash) & (IdempotencyRecord.key == key)
                if status >= 500:
                    # A failure is not an answer: let the client retry with the same key.
                    await session.execute(delete(IdempotencyRecord).where(match))
                else:
                    record = await session.scalar(select(IdempotencyRecord).where(match))
                    if record is not None:
                        record.status_code = status
                        record.response_body = b"".join(chunks)
                        record.content_type = content_type


def request_fingerprint(scope: Scope, body: bytes, legacy_prefix: str) -> str:
    """What makes two requests the same request, as Stripe compares them: the method, the route
    (the legacy prefix is the same API as /v1), the query's parameters and the parsed JSON body,
    whatever its spacing, key order or number spelling (5000 and 5000.00 are one number)."""
    path: str = scope["path"]
    if path.startswith(legacy_prefix + "/"):
        path = "/v1" + path[len(legacy_prefix) :]
    query = sorted(parse_qsl(scope["query_string"].decode("latin-1"), keep_blank_values=True))
    try:
        parsed = json.loads(body, parse_float=_number, parse_int=_number) if body else None
        canonical = repr(_sorted(parsed))
    except (ValueError, RecursionError):  # not JSON: the bytes are the request
        canonical = repr(body)
    text = "\n".join([scope["method"], path, repr(query), canonical])
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _number(text: str) -> Decimal:
    """The number without trailing zeros, exactly (a context as precise as the text rounds
    nothing)."""
    exact = Context(prec=len(text), Emax=MAX_EMAX, Emin=MIN_EMIN)
    return Decimal(text).normalize(exact)


def _sorted(value: Any) -> Any:
    """`value` with every object's members in key order (keys are unique, so only keys compare)."""
    if isinstance(value, dict):
        return sorted((name, _sorted(member)) for name, member in value.items())
    if isinstance(value, list):
        return [_sorted(item) for item in value]
    return value


def _raw_fingerprint(scope: Scope, body: bytes) -> str:
    parts = [scope["method"].encode(), scope["path"].encode(), scope["query_string"], body]
    return hashlib.sha256(b"\n".join(parts)).hexdigest()


def _in_flight() -> Any:
    return native_error(
        409,
        "idempotency_in_progress",
        "A request with this Idempotency-Key is still being processed; retry shortly.",
    )


def _cookie(header: str) -> str | None:
    for part in header.split(";"):
        name, _, value = part.strip().partition("=")
        if name == SESSION_COOKIE and value:
            return value
    return None


# A page that brings no policy of its own (the web app's and /docs bring theirs) gets this one.
FALLBACK_PAGE_CSP = "default-src 'self'; object-src 'none'; base-uri 'self'; frame-ancestors 'none'"
HSTS = "max-age=31536000"  # a year; no includeSubDomains: other hosts of the domain are not ours


def apply_security_headers(headers: MutableHeaders, https: bool) -> None:
    """nosniff on every answer, HSTS when the service is public on https, and on HTML pages a
    ban on being framed (clickjacking) plus a CSP unless the page set its own."""
    headers.setdefault("X-Content-Type-Options", "nosniff")
    if https:
        headers.setdefault("Strict-Transport-Security", HSTS)
    if headers.get("content-type", "").startswith("text/html"):
        headers.setdefault("X-Frame-Options", "DENY")
        headers.setdefault("Content-Security-Policy", FALLBACK_PAGE_CSP)


class SecurityHeadersMiddleware:
    """Security headers on every HTTP answer: API, /fapi, errors, pages and static files."""

    def __init__(self, app: ASGIApp, settings: Settings):
        self.app = app
        self.https = settings.public_base_url.startswith("https://")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = list(message.get("headers", []))
                apply_security_headers(MutableHeaders(scope=message), self.https)
            await send(message)

        await self.app(scope, receive, with_headers)


def docs_csp(page: bytes) -> str:
    """The CSP of the Swagger UI page: its one inline script is allowed by its hash, Swagger UI
    sets style attributes and draws icons from data: URIs, and "Try it out" calls this origin."""
    inline = re.search(rb"<script>(.*?)</script>", page, re.DOTALL)
    assert inline is not None, "Swagger UI's page starts itself with an inline script"
    digest = base64.b64encode(hashlib.sha256(inline.group(1)).digest()).decode()
    return (
        f"default-src 'self'; script-src 'self' 'sha256-{digest}'; "
        "style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; "
        "object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'"
    )
