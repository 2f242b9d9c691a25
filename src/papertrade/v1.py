"""The native /v1 router: every domain's endpoints, mounted at /v1 and at the legacy prefix."""

from fastapi import APIRouter

from papertrade.keys.endpoints import router as keys_router
from papertrade.portfolios.endpoints import router as portfolios_router
from papertrade.users.endpoints import router as users_router


def build_router() -> APIRouter:
    router = APIRouter()
    for domain in (users_router, keys_router, portfolios_router):
        router.include_router(domain)
    return router
