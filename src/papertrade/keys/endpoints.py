"""/v1/user/api-keys (session cookie only)."""

from fastapi import APIRouter

from papertrade.auth.v1 import Ctx, WebUser
from papertrade.keys import service
from papertrade.keys.schemas import ApiKeyCreate, ApiKeyCreated, ApiKeyRead
from papertrade.kit.ids import Id

router = APIRouter(tags=["api keys"])


@router.post("/user/api-keys", status_code=201, response_model=ApiKeyCreated)
async def create_api_key(body: ApiKeyCreate, principal: WebUser, ctx: Ctx) -> ApiKeyCreated:
    """Create a native API key; the key is in this response only."""
    async with ctx.transaction() as uow:
        row, key = await service.create(uow, principal.user_id, body.note, body.scope)
        return ApiKeyCreated(**ApiKeyRead.model_validate(row).model_dump(), key=key)


@router.get("/user/api-keys", response_model=list[ApiKeyRead])
async def list_api_keys(principal: WebUser, ctx: Ctx) -> list[ApiKeyRead]:
    """The user's keys, newest first, never the key itself."""
    async with ctx.db.reader() as session:
        return [
            ApiKeyRead.model_validate(r) for r in await service.list_for(session, principal.user_id)
        ]


@router.delete("/user/api-keys/{key_id}", response_model=ApiKeyRead)
async def revoke_api_key(key_id: Id, principal: WebUser, ctx: Ctx) -> ApiKeyRead:
    """Revoke a key; it stops working on the very next request."""
    async with ctx.transaction() as uow:
        return ApiKeyRead.model_validate(await service.revoke(uow, principal.user_id, key_id))
