"""Routing with the per-request work done once (kit/routescan.py): every documented endpoint is
still reached, paths outside every router still get the documented 404, and the FastAPI internals
the shortcut relies on are still there."""

import re

import httpx
from fastapi import FastAPI
from fastapi.routing import APIRouter, _IncludedRouter, _RouterIncludeContext

from papertrade.kit.routescan import path_pattern
from tests.conftest import client_for

UNKNOWN_ROUTE = "No such endpoint"
NEVER = re.compile(r"(?!)")


def test_the_fastapi_internals_the_shortcut_uses_are_there() -> None:
    """An upgrade of FastAPI that renames them must fail here, not silently slow every request."""
    assert callable(APIRouter._get_routes_version)
    assert callable(_IncludedRouter.effective_candidates)
    assert callable(_RouterIncludeContext.combine)
    assert callable(_RouterIncludeContext.path_for)


async def test_every_documented_operation_is_routed_to_an_endpoint(app: FastAPI) -> None:
    async with client_for(app) as client:
        spec = (await client.get("/v1/openapi.json")).json()
        missed = []
        for template, operations in spec["paths"].items():
            path = re.sub(r"\{[^}]+\}", "1", template)
            for method in operations:
                if method not in {"get", "post", "put", "patch", "delete"}:
                    continue
                answer = await client.request(method.upper(), path, json={})
                if answer.status_code == 405 or _unknown(answer):
                    missed.append(f"{method.upper()} {template}: {answer.status_code}")
        assert missed == []
        assert len(spec["paths"]) > 100  # the walk covered the API, not an empty document


async def test_a_path_no_router_serves_gets_the_documented_404(app: FastAPI) -> None:
    async with client_for(app) as client:
        for path in ("/v1/nothing-here", "/v1/portfolios/1/nothing", "/v1", "/fapi/v1/nothing"):
            answer = await client.get(path)
            assert answer.status_code == 404, path
            if path.startswith("/v1"):
                assert answer.json()["error"] == "not_found"
                assert answer.json()["msg"].startswith(UNKNOWN_ROUTE)
            else:
                assert set(answer.json()) == {"code", "msg"}
        wrong_method = await client.put("/v1/market/status")
        assert wrong_method.status_code == 405
        assert wrong_method.json()["error"] == "method_not_allowed"


def test_each_domain_is_skipped_unless_one_of_its_paths_fits(app: FastAPI) -> None:
    """The /v1 router holds one included router per domain, each skipped by one expression."""
    native = next(
        r
        for r in app.router.routes
        if isinstance(r, _IncludedRouter) and r.include_context.prefix == "/v1"
    )
    domains = [c for c in native.effective_candidates() if isinstance(c, _IncludedRouter)]
    assert len(domains) > 20
    patterns = {id(d): path_pattern(d) for d in domains}
    assert all(patterns.values())  # every domain can be skipped
    fitting = [d for d in domains if (patterns[id(d)] or NEVER).match("/v1/portfolios/7")]
    assert [d.original_router.tags for d in fitting] == [["portfolios"]]
    assert not any((p or NEVER).match("/v1/nothing-here") for p in patterns.values())


def _unknown(answer: httpx.Response) -> bool:
    if answer.status_code != 404:
        return False
    try:
        body = answer.json()
    except ValueError:
        return False
    return isinstance(body, dict) and str(body.get("msg", "")).startswith(UNKNOWN_ROUTE)
