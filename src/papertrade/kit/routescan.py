"""Routing at the framework's floor: what FastAPI 0.165 does again on every request, done once.

FastAPI 0.165 keeps an included router as a live view of the router it includes. Each request
therefore (1) recounts every router's routes to learn whether its cached candidates are still
current, and (2) asks every included router in turn whether it has a match, which walks all of
its routes, even for a path none of them can serve. Together that was about a third of the CPU
of an authenticated read (bench/bench_reads_cpu.py --profile).

The service's routes are complete once create_app returns and never change after, so
`freeze_routing(app)` pins each router's route count, and gives each included router a guard
that answers "no match" at once for a path none of its routes can match: one regular
expression, the alternation of its routes' own path expressions, tried in one call. The answer
for a path that passes the guard is FastAPI's own (methods and 405s, parameters and their
conversion), so which route serves a request does not change. A router with a route of no
known path expression is never skipped.

The guards are made from the routes' paths alone, so nothing of FastAPI's own per-route work
(each route's dependencies and parameter models, built again for every app that includes the
router) is done before a request needs it: FastAPI builds an included router's routes the first
time a path reaches it, and the guard lets only the paths it serves through. Building every
route eagerly was half a second of CPU per app, which the test suite paid on each of its
hundreds of app starts for the few routes each test calls.

The guard uses FastAPI's private `_IncludedRouter`, `_RouterIncludeContext` (`combine`,
`path_for`) and `APIRouter._get_routes_version`; the pinned FastAPI version has them, and
tests/foundation/test_routescan.py fails if an upgrade drops them.
"""

import re
from collections.abc import Callable, Iterator
from typing import Any

from fastapi import FastAPI
from fastapi.routing import (
    APIRoute,
    APIRouter,
    APIWebSocketRoute,
    _IncludedRouter,
    _RouterIncludeContext,
)
from starlette._utils import get_route_path
from starlette.routing import Match, Route, WebSocketRoute, compile_path
from starlette.types import Scope


def freeze_routing(app: FastAPI) -> None:
    """Call once every route is added: later route changes would not be seen."""
    for route in app.router.routes:
        if isinstance(route, _IncludedRouter):
            _pin_versions(route.original_router)
            _freeze(route)


def _pin_versions(router: APIRouter) -> None:
    """Pin the route count of the router and of every router it includes (shared by every app
    that includes them, so pinned once)."""
    if _PINNED in vars(router):
        return
    version = router._get_routes_version()
    pinned: Callable[..., int] = lambda seen=None: version  # noqa: E731
    router._get_routes_version = pinned  # type: ignore[method-assign]
    setattr(router, _PINNED, True)
    for route in router.routes:
        if isinstance(route, _IncludedRouter):
            _pin_versions(route.original_router)


_PINNED = "_papertrade_routes_pinned"


def _freeze(router: _IncludedRouter) -> None:
    """Guard the included router, and the routers it includes once FastAPI has made them (when
    a request first reaches its routes)."""
    _guard(router)
    build = router.effective_candidates
    guarded: list[bool] = []

    def effective_candidates() -> list[Any]:
        candidates = build()
        if not guarded:
            guarded.append(True)
            for candidate in candidates:
                if isinstance(candidate, _IncludedRouter):
                    _freeze(candidate)
        return candidates

    router.effective_candidates = effective_candidates  # type: ignore[method-assign]


def path_pattern(router: _IncludedRouter) -> re.Pattern[str] | None:
    """One expression matching exactly the paths some route of the included router matches
    (its routes' expressions, their named groups made plain); None if a route has none."""
    patterns = list(_route_patterns(router.original_router, router.include_context))
    if not patterns or None in patterns:
        return None
    return re.compile("|".join(f"(?:{_NAMED_GROUP.sub('(?:', p)})" for p in patterns if p))


_PLAIN_ROUTES = (APIRoute, APIWebSocketRoute, Route, WebSocketRoute)


def _route_patterns(router: APIRouter, context: _RouterIncludeContext) -> Iterator[str | None]:
    """The path expression of each route, as FastAPI compiles it for this inclusion (the
    prefixes joined the same way); None for a route of another kind."""
    for route in router.routes:
        if isinstance(route, _IncludedRouter):
            yield from _route_patterns(
                route.original_router, context.combine(route.include_context)
            )
        elif isinstance(route, _PLAIN_ROUTES):
            yield compile_path(context.path_for(route))[0].pattern
        else:
            yield None


_NAMED_GROUP = re.compile(r"\(\?P<[A-Za-z_][A-Za-z0-9_]*>")


def _guard(router: _IncludedRouter) -> None:
    pattern = path_pattern(router)
    if pattern is None:
        return
    fits = pattern.match
    matches: Callable[[Scope], tuple[Match, Scope]] = router.matches

    def guarded(scope: Scope) -> tuple[Match, Scope]:
        if fits(get_route_path(scope)) is None:
            return Match.NONE, {}
        return matches(scope)

    router.matches = guarded  # type: ignore[method-assign]
