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

The guard uses FastAPI's private `_IncludedRouter` and `APIRouter._get_routes_version`; the pinned
FastAPI version has both, and tests/foundation/test_routescan.py fails if an upgrade drops them.
"""

import re
from collections.abc import Callable, Iterator

from fastapi import FastAPI
from fastapi.routing import APIRouter, _IncludedRouter
from starlette._utils import get_route_path
from starlette.routing import BaseRoute, Match
from starlette.types import Scope


def freeze_routing(app: FastAPI) -> None:
    """Call once every route is added: later route changes would not be seen."""
    included = list(_included_routers(app.router.routes))
    for original in {id(r.original_router): r.original_router for r in included}.values():
        _pin_version(original)
    for router in included:
        _guard(router)


def _included_routers(routes: list[BaseRoute]) -> Iterator[_IncludedRouter]:
    """Every included router, at every depth, as the request path meets them (the children are
    the ones the parent caches, so they are built here, after the versions are pinned)."""
    for route in routes:
        if isinstance(route, _IncludedRouter):
            yield route
            yield from _nested(route)


def _nested(router: _IncludedRouter) -> Iterator[_IncludedRouter]:
    for candidate in router.effective_candidates():
        if isinstance(candidate, _IncludedRouter):
            yield candidate
            yield from _nested(candidate)


def _pin_version(router: APIRouter) -> None:
    version = router._get_routes_version()
    pinned: Callable[..., int] = lambda seen=None: version  # noqa: E731
    router._get_routes_version = pinned  # type: ignore[method-assign]


def path_pattern(router: _IncludedRouter) -> re.Pattern[str] | None:
    """One expression matching exactly the paths some route of the included router matches
    (its routes' expressions, their named groups made plain); None if a route has none."""
    patterns = []
    for context in router.effective_route_contexts():
        regex = getattr(context.starlette_route, "path_regex", None) or context.path_regex
        if regex is None:
            return None
        patterns.append(f"(?:{_NAMED_GROUP.sub('(?:', regex.pattern)})")
    return re.compile("|".join(patterns)) if patterns else None


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
