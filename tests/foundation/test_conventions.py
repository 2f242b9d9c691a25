"""Native conventions: media type, error shape for every failure, body limits (points 8, 11, 12)."""

import httpx
from fastapi import FastAPI
from fastapi.routing import APIRoute, iter_route_contexts

from papertrade.config import Settings
from tests.conftest import User, client_for, running_app


async def test_error_shapes_for_framework_failures(anon: httpx.AsyncClient, user: User) -> None:
    cases = [
        (await anon.get("/v1/does-not-exist"), 404, "not_found"),
        (await anon.put("/v1/user"), 405, "method_not_allowed"),
        (await user.post("/v1/portfolios", content=b"{not json"), 422, "validation_error"),
        (await user.post("/v1/portfolios", json=[1, 2]), 422, "validation_error"),
        (await user.get("/v1/portfolios/not-a-number"), 422, "validation_error"),
    ]
    for response, status, code in cases:
        assert response.status_code == status, response.text
        assert response.headers["content-type"] == "application/json; charset=utf-8"
        assert set(response.json()) == {"error", "msg"} and response.json()["error"] == code
        assert response.json()["msg"]


async def test_unhandled_exception_is_a_500_in_the_native_shape(settings: Settings) -> None:
    async with running_app(settings) as app:

        @app.get("/v1/_boom")
        async def boom() -> None:
            raise RuntimeError("kaboom")

        transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
        async with httpx.AsyncClient(transport=transport, base_url="https://testserver") as client:
            response = await client.get("/v1/_boom")
    assert response.status_code == 500
    assert response.json() == {
        "error": "internal_error",
        "msg": "Something went wrong on our side; it was logged.",
    }
    assert "kaboom" not in response.text


async def test_one_megabyte_body_is_refused_with_413(user: User) -> None:
    body = b'{"name": "' + b"x" * 1_000_000 + b'"}'
    response = await user.post(
        "/v1/portfolios", content=body, headers={"content-type": "application/json"}
    )
    assert response.status_code == 413
    assert response.json()["error"] == "payload_too_large"


async def test_every_native_route_has_its_legacy_twin(app: FastAPI, settings: Settings) -> None:
    routes = {
        (method, str(context.path))
        for context in iter_route_contexts(app.routes)
        if isinstance(context.original_route, APIRoute)
        for method in context.original_route.methods or ()
    }
    native = {(m, p) for m, p in routes if p.startswith("/v1/")}
    assert len(native) > 15
    for method, path in native:
        twin = settings.legacy_prefix + path[len("/v1") :]
        assert (method, twin) in routes, f"{method} {twin} missing"
    fapi = {(m, p) for m, p in routes if p.startswith("/fapi/")}
    for method, path in fapi:
        assert (method, f"{settings.legacy_prefix}/binance{path}") in routes, path


async def test_legacy_address_reaches_the_same_handler(user: User) -> None:
    created = await user.post("/api/portfolios", json={"name": "legacy"})
    assert created.status_code == 201
    fetched = await user.get(f"/v1/portfolios/{created.json()['id']}")
    assert fetched.json()["name"] == "legacy"
    assert (await user.get("/api/nope")).json()["error"] == "not_found"


async def test_docs_are_served_without_any_cdn(anon: httpx.AsyncClient) -> None:
    page = await anon.get("/docs")
    assert page.status_code == 200
    assert "/static/vendor/swagger-ui-dist/swagger-ui-bundle.js" in page.text
    assert "cdn" not in page.text.lower()
    asset = await anon.get("/static/vendor/swagger-ui-dist/swagger-ui-bundle.js")
    assert asset.status_code == 200 and len(asset.content) > 100_000
    schema = (await anon.get("/v1/openapi.json")).json()
    assert "/v1/portfolios" in schema["paths"]
    assert not any(p.startswith("/api/") for p in schema["paths"])
    assert "examples" in str(schema["components"]["schemas"]["PortfolioCreate"])


async def test_healthz_checks_the_database(anon: httpx.AsyncClient, settings: Settings) -> None:
    response = await anon.get("/healthz")
    assert response.status_code == 200
    health = response.json()
    assert (health["status"], health["database"], health["market"]) == ("ok", "ok", "ok")
    assert health["redis"] == "unused" and ("disk" in health) == settings.is_sqlite
    broken = settings.model_copy(
        update={"database_url": "sqlite+aiosqlite:////nonexistent/dir/x.db"}
    )
    from papertrade.app import create_app

    app = create_app(broken)  # not started: migrations would fail, the health check must say so
    async with client_for(app) as client:
        down = await client.get("/healthz")
    assert down.status_code == 503 and down.json()["error"] == "database_unavailable"
