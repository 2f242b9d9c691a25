"""Security headers on every answer: nosniff everywhere, a CSP and a frame ban on /docs and the
pages, HSTS when the service is public on https (issue 14 item 12; the pages loading in a real
browser under their CSP is tests/web/test_content_security_policy.py)."""

import httpx
from fastapi import FastAPI

from papertrade.config import Settings
from tests.conftest import ORIGIN, client_for, running_app

PAGES = ["/docs", "/", "/login", "/markets", "/square"]


async def test_every_kind_of_answer_says_nosniff(anon: httpx.AsyncClient) -> None:
    answers = {
        "json": await anon.get("/v1/market/symbols"),
        "native error": await anon.get("/v1/no-such-thing"),
        "unauthenticated": await anon.get("/v1/user"),
        "fapi": await anon.get("/fapi/v1/ping"),
        "fapi error": await anon.get("/fapi/v1/no-such-thing"),
        "too large": await anon.post(
            "/v1/auth/login", content=b"x" * 70_000, headers={"Origin": ORIGIN}
        ),
        "static": await anon.get("/static/app/app.css"),
        "vendored": await anon.get("/static/vendor/swagger-ui-dist/swagger-ui.css"),
        "openapi": await anon.get("/v1/openapi.json"),
        "health": await anon.get("/healthz"),
        **{page: await anon.get(page) for page in PAGES},
    }
    assert answers["too large"].status_code == 413
    for name, answer in answers.items():
        assert answer.headers.get("x-content-type-options") == "nosniff", name


async def test_an_unexpected_failure_says_nosniff_too(settings: Settings) -> None:
    async with running_app(settings) as app:

        async def broken() -> None:
            raise RuntimeError("a bug")

        app.add_api_route("/v1/broken", broken)
        transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
        async with httpx.AsyncClient(transport=transport, base_url=ORIGIN) as client:
            answer = await client.get("/v1/broken")
    assert answer.status_code == 500 and answer.json()["error"] == "internal_error"
    assert answer.headers["x-content-type-options"] == "nosniff"
    assert answer.headers["strict-transport-security"] == "max-age=31536000"


async def test_docs_and_pages_have_a_csp_and_may_not_be_framed(anon: httpx.AsyncClient) -> None:
    for page in PAGES:
        answer = await anon.get(page)
        assert answer.status_code == 200, page
        policy = answer.headers["content-security-policy"]
        assert "frame-ancestors 'none'" in policy, page
        assert "object-src 'none'" in policy, page
        assert "unsafe-eval" not in policy, page
        assert answer.headers["x-frame-options"] == "DENY", page
    docs = (await anon.get("/docs")).headers["content-security-policy"]
    assert "script-src 'self' 'sha256-" in docs  # the one inline script, by hash


async def test_hsts_only_when_the_public_address_is_https(app: FastAPI, settings: Settings) -> None:
    async with client_for(app) as client:
        secure = await client.get("/v1/market/symbols")
    assert secure.headers["strict-transport-security"] == "max-age=31536000"
    plain = settings.model_copy(update={"public_base_url": "http://127.0.0.1:8000"})
    async with running_app(plain) as local, client_for(local) as client:
        answer = await client.get("/v1/market/symbols")
    assert "strict-transport-security" not in answer.headers
    assert answer.headers["x-content-type-options"] == "nosniff"
