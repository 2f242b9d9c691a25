"""/v1/portfolios: create, read, update, delete, and the portfolio's credentials."""

from decimal import Decimal

from fastapi import APIRouter

from papertrade.auth.v1 import Caller, Ctx, MaybeCaller, WebUser, Writer
from papertrade.kit.ids import Id
from papertrade.kit.time import now_ms
from papertrade.orders.pricing import Venue
from papertrade.portfolios import credentials, service
from papertrade.portfolios.schemas import (
    CompatKeyCreate,
    CompatKeyCreated,
    CompatKeyRead,
    PortfolioCreate,
    PortfolioRead,
    PortfolioUpdate,
    WebhookTokenCreated,
    WebhookTokenRead,
)
from papertrade.profiles import leaving
from papertrade.square.endpoints import public_view
from papertrade.square.schemas import PublicPortfolio
from papertrade.tiers import limits as tier_limits

router = APIRouter(tags=["portfolios"])


@router.post("/portfolios", status_code=201, response_model=PortfolioRead)
async def create_portfolio(body: PortfolioCreate, principal: Writer, ctx: Ctx) -> PortfolioRead:
    """Create a portfolio funded with `initial_balance` USDT (default 10,000)."""
    async with ctx.transaction() as uow:
        portfolio = await service.create(
            uow,
            principal.user_id,
            name=body.name,
            description=body.description,
            initial_balance=body.initial_balance,
            visibility=body.visibility,
            realism=body.realism,
            maker_fee_rate=Decimal(ctx.settings.maker_fee_rate),
            taker_fee_rate=Decimal(ctx.settings.taker_fee_rate),
            enforce_tier=ctx.settings.tiers_enforced,
        )
        return PortfolioRead.model_validate(portfolio)


@router.get("/portfolios/my", response_model=list[PortfolioRead])
async def my_portfolios(principal: Caller, ctx: Ctx) -> list[PortfolioRead]:
    """The caller's portfolios (works with an API key)."""
    async with ctx.db.reader() as session:
        rows = await service.list_mine(session, principal.user_id)
        return [PortfolioRead.model_validate(p) for p in rows]


@router.get("/portfolios/by_code/{code}", response_model=PortfolioRead | PublicPortfolio)
async def portfolio_by_code(
    code: str, principal: MaybeCaller, ctx: Ctx
) -> PortfolioRead | PublicPortfolio:
    """Look up by short code (e.g. P0000001). The owner gets the whole portfolio; anyone else
    gets the public view of a public one (as `/portfolios/{code}/public`), never a private one."""
    async with ctx.db.reader() as session:
        portfolio = await service.get_by_code(session, principal, code)
        if principal is not None and service.is_owner(principal, portfolio):
            return PortfolioRead.model_validate(portfolio)
        return await public_view(session, ctx.market, portfolio)


@router.get("/portfolios/{portfolio_id}", response_model=PortfolioRead)
async def get_portfolio(portfolio_id: Id, principal: Caller, ctx: Ctx) -> PortfolioRead:
    """One of the caller's portfolios."""
    return PortfolioRead.model_validate(await service.read_owned(ctx.db, principal, portfolio_id))


@router.patch("/portfolios/{portfolio_id}", response_model=PortfolioRead)
async def update_portfolio(
    portfolio_id: Id, body: PortfolioUpdate, principal: Writer, ctx: Ctx
) -> PortfolioRead:
    """Rename, describe, change visibility or the realism profile (applies to later fills)."""
    async with ctx.db.unit_of_work() as session:
        portfolio = await service.get_owned(session, principal, portfolio_id, for_update=True)
        if ctx.settings.tiers_enforced:  # over the tier after a downgrade: read-only
            await tier_limits.check_portfolio_writable(session, portfolio.id, now_ms())
        for field, value in body.model_dump(exclude_none=True).items():
            setattr(portfolio, field, value)
        await session.flush()
        return PortfolioRead.model_validate(portfolio)


@router.delete("/portfolios/{portfolio_id}", response_model=PortfolioRead)
async def delete_portfolio(portfolio_id: Id, principal: WebUser, ctx: Ctx) -> PortfolioRead:
    """Delete: hidden from every listing, its keys and webhook tokens revoked; history kept. Its
    copy relations end and the subscriptions to it end now (docs/profile.md)."""
    await service.read_owned(ctx.db, principal, portfolio_id)  # else a 404, before any lock
    async with ctx.transaction() as uow:
        # Its copy relations first, then the portfolio: the order the copy mirror takes them in
        # (copytrading/mirror.py).
        await leaving.portfolio_goes(uow, Venue.of(ctx), portfolio_id, principal.user_id)
        portfolio = await service.get_owned(uow.session, principal, portfolio_id, for_update=True)
        await service.soft_delete(uow, portfolio)
        return PortfolioRead.model_validate(portfolio)


@router.post(
    "/portfolios/{portfolio_id}/api-keys", status_code=201, response_model=CompatKeyCreated
)
async def create_compat_key(
    portfolio_id: Id, body: CompatKeyCreate, principal: WebUser, ctx: Ctx
) -> CompatKeyCreated:
    """A Binance-compatible key pair for this portfolio; the secret is shown only here."""
    async with ctx.db.unit_of_work() as session:
        await service.get_owned(session, principal, portfolio_id)
        if ctx.settings.tiers_enforced:
            await tier_limits.check_portfolio_writable(session, portfolio_id, now_ms())
        row, key, secret = await credentials.create_compat_key(
            session, ctx.cipher, portfolio_id, body.note
        )
        read = CompatKeyRead.model_validate(row)
    return CompatKeyCreated(**read.model_dump(), api_key=key, api_secret=secret)


@router.get("/portfolios/{portfolio_id}/api-keys", response_model=list[CompatKeyRead])
async def list_compat_keys(portfolio_id: Id, principal: WebUser, ctx: Ctx) -> list[CompatKeyRead]:
    """The portfolio's key pairs, revoked ones included (never the key or secret)."""
    async with ctx.db.reader() as session:
        await service.get_owned(session, principal, portfolio_id)
        rows = await credentials.list_compat_keys(session, portfolio_id)
        return [CompatKeyRead.model_validate(r) for r in rows]


@router.delete("/portfolios/{portfolio_id}/api-keys/{key_id}", response_model=CompatKeyRead)
async def revoke_compat_key(
    portfolio_id: Id, key_id: Id, principal: WebUser, ctx: Ctx
) -> CompatKeyRead:
    """Revoke a key pair at once."""
    async with ctx.transaction() as uow:
        await service.get_owned(uow.session, principal, portfolio_id)
        row = await credentials.revoke_compat_key(uow, portfolio_id, key_id)
        return CompatKeyRead.model_validate(row)


@router.post(
    "/portfolios/{portfolio_id}/webhook-tokens",
    status_code=201,
    response_model=WebhookTokenCreated,
)
async def create_webhook_token(
    portfolio_id: Id, principal: WebUser, ctx: Ctx
) -> WebhookTokenCreated:
    """A webhook token and the full URL to paste into an alert; shown only here."""
    async with ctx.db.unit_of_work() as session:
        await service.get_owned(session, principal, portfolio_id)
        row, token = await credentials.create_webhook_token(
            session,
            portfolio_id,
            owner_id=principal.user_id,
            enforce_tier=ctx.settings.tiers_enforced,
        )
        read = WebhookTokenRead.model_validate(row)
    url = f"{ctx.settings.public_base_url.rstrip('/')}/webhook/tv/{token}"
    return WebhookTokenCreated(**read.model_dump(), webhook_token=token, url=url)


@router.get("/portfolios/{portfolio_id}/webhook-tokens", response_model=list[WebhookTokenRead])
async def list_webhook_tokens(
    portfolio_id: Id, principal: WebUser, ctx: Ctx
) -> list[WebhookTokenRead]:
    """The portfolio's webhook tokens, revoked ones included."""
    async with ctx.db.reader() as session:
        await service.get_owned(session, principal, portfolio_id)
        rows = await credentials.list_webhook_tokens(session, portfolio_id)
        return [WebhookTokenRead.model_validate(r) for r in rows]


@router.delete(
    "/portfolios/{portfolio_id}/webhook-tokens/{token_id}", response_model=WebhookTokenRead
)
async def revoke_webhook_token(
    portfolio_id: Id, token_id: Id, principal: WebUser, ctx: Ctx
) -> WebhookTokenRead:
    """Revoke a webhook token at once."""
    async with ctx.db.unit_of_work() as session:
        await service.get_owned(session, principal, portfolio_id)
        row = await credentials.revoke_webhook_token(session, portfolio_id, token_id)
        return WebhookTokenRead.model_validate(row)
