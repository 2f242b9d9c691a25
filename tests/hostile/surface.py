"""The app's own list of its routes, and which of them name an object someone owns.

Used by the authorization walk (test_authorization.py): the walk must cover every route this
module finds, so a new endpoint that takes an id fails the suite until the walk covers it.
"""

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, get_args

from fastapi import FastAPI
from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute, APIWebSocketRoute, iter_route_contexts
from pydantic import BaseModel
from starlette.routing import Mount, Route, WebSocketRoute

PATH_PARAM = re.compile(r"{(\w+)(:\w+)?}")
# A query or body field with one of these names points at an object (portfolio, order, key,
# token, signal, fill …); `before_id`/`from_id` paging cursors count too: they are ids.
ID_FIELD = re.compile(r"(^|_)(id|code|token)$")


@dataclass(frozen=True, order=True)
class RouteKey:
    """One way into the app: an HTTP method (ANY for a catch-all, WS for a WebSocket) and a path
    template as the router holds it."""

    method: str
    path: str

    def __str__(self) -> str:
        return f"{self.method} {self.path}"


@dataclass(frozen=True)
class RouteInfo:
    key: RouteKey
    path_params: tuple[str, ...]
    id_fields: tuple[str, ...]  # query and body fields that name an object
    dependency_calls: tuple[Callable[..., Any], ...]

    @property
    def names_an_object(self) -> bool:
        return bool(self.path_params or self.id_fields) or self.key.method == "WS"


def _dependants(root: Dependant) -> Iterator[Dependant]:
    stack = [root]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(current.dependencies)


def _model_fields(annotation: Any) -> list[str]:
    candidates = [annotation, *get_args(annotation)]
    names: list[str] = []
    for candidate in candidates:
        if isinstance(candidate, type) and issubclass(candidate, BaseModel):
            names.extend(candidate.model_fields)
    return names


def _fields(dependant: Dependant) -> tuple[list[str], list[Callable[..., Any]]]:
    names: list[str] = []
    calls: list[Callable[..., Any]] = []
    for dep in _dependants(dependant):
        if dep.call is not None:
            calls.append(dep.call)
        names.extend(field.alias for field in dep.query_params)
        for field in dep.body_params:
            nested = _model_fields(field.field_info.annotation)
            names.extend(nested or [field.alias])
    return names, calls


def routes(app: FastAPI) -> list[RouteInfo]:
    """Every route of the app, flattened through included routers and prefixes."""
    found: list[RouteInfo] = []
    for context in iter_route_contexts(app.routes):
        original = context.original_route
        path = str(context.path)
        params = tuple(name for name, _ in PATH_PARAM.findall(path))
        if isinstance(original, APIRoute):
            names, calls = _fields(original.dependant)
            ids = tuple(sorted({n for n in names if ID_FIELD.search(n)}))
            for method in sorted(original.methods or ()):
                found.append(RouteInfo(RouteKey(method, path), params, ids, tuple(calls)))
        elif isinstance(original, APIWebSocketRoute | WebSocketRoute):
            found.append(RouteInfo(RouteKey("WS", path), params, (), ()))
        elif isinstance(original, Route):
            methods = original.methods or set()
            if len(methods - {"HEAD"}) > 1:
                found.append(RouteInfo(RouteKey("ANY", path), params, (), ()))
            else:
                for method in sorted(methods - {"HEAD"}):
                    found.append(RouteInfo(RouteKey(method, path), params, (), ()))
        elif isinstance(original, Mount):
            found.append(RouteInfo(RouteKey("MOUNT", path), (), (), ()))
        else:  # pragma: no cover - a new kind of route must be classified here first
            raise AssertionError(f"unknown route type {type(original).__name__} at {path}")
    return found
