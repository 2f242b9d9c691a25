"""The native /v1 router: every domain's endpoints, mounted at /v1 and at the legacy prefix."""

from fastapi import APIRouter

from papertrade.accounts.endpoints import router as accounts_router
from papertrade.keys.endpoints import router as keys_router
from papertrade.market.endpoints import router as market_router
from papertrade.orders.endpoints import router as orders_router
from papertrade.portfolios.endpoints import router as portfolios_router
from papertrade.positions.endpoints import router as positions_router
from papertrade.square.endpoints import router as square_router
from papertrade.users.endpoints import router as users_router
from papertrade.webhooks.endpoints import router as webhooks_router
from papertrade.ws.endpoints import router as ws_router

DOMAINS = (
    users_router,
    keys_router,
    square_router,  # before portfolios: /portfolios/square is not /portfolios/{id}
    portfolios_router,
    orders_router,
    positions_router,
    accounts_router,
    market_router,
    webhooks_router,
    ws_router,
)


def build_router() -> APIRouter:
    router = APIRouter()
    for domain in DOMAINS:
        router.include_router(domain)
    return router
