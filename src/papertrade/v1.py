"""The native /v1 router: every domain's endpoints, mounted at /v1 and at the legacy prefix."""

from fastapi import APIRouter

from papertrade.accounts.endpoints import router as accounts_router
from papertrade.chain.endpoints import router as chain_router
from papertrade.comments.endpoints import router as comments_router
from papertrade.conditional.endpoints import router as conditional_router
from papertrade.copytrading.endpoints import router as copy_router
from papertrade.feedback.endpoints import router as feedback_router
from papertrade.inbound.endpoints import router as inbound_router
from papertrade.keys.endpoints import router as keys_router
from papertrade.launch.endpoints import router as launch_router
from papertrade.live.endpoints import router as live_router
from papertrade.mail.endpoints import router as mail_router
from papertrade.market.endpoints import router as market_router
from papertrade.notifications.endpoints import router as notifications_router
from papertrade.orders.endpoints import router as orders_router
from papertrade.portfolios.endpoints import router as portfolios_router
from papertrade.positions.endpoints import router as positions_router
from papertrade.profiles.endpoints import router as profiles_router
from papertrade.recharge.endpoints import router as recharge_router
from papertrade.square.endpoints import router as square_router
from papertrade.strategies.endpoints import router as strategies_router
from papertrade.subscriptions.endpoints import router as subscriptions_router
from papertrade.tg.endpoints import router as telegram_router
from papertrade.tiers.endpoints import router as tiers_router
from papertrade.users.endpoints import router as users_router
from papertrade.wallet.endpoints import router as wallet_router
from papertrade.webhooks.endpoints import router as webhooks_router
from papertrade.ws.endpoints import router as ws_router

# A request is matched against the routes in this order: the hot paths (orders, market data)
# come first, so placing an order does not first try every account-management route.
DOMAINS = (
    orders_router,
    market_router,
    positions_router,
    accounts_router,
    square_router,  # before portfolios: /portfolios/square is not /portfolios/{id}
    portfolios_router,
    users_router,
    keys_router,
    webhooks_router,
    ws_router,
    strategies_router,
    conditional_router,
    notifications_router,
    telegram_router,
    mail_router,
    inbound_router,
    wallet_router,
    recharge_router,
    tiers_router,
    launch_router,
    profiles_router,
    feedback_router,
    chain_router,
    live_router,
    copy_router,
    subscriptions_router,
    comments_router,
)


def build_router() -> APIRouter:
    """A router per domain, in DOMAINS order: a request skips each domain none of whose paths
    fits it with one regular expression (kit/routescan.py)."""
    router = APIRouter()
    for domain in DOMAINS:
        router.include_router(domain)
    return router
