"""/v1/user/profile, /v1/user/avatar, /v1/user/password, /v1/user/delete and public profiles."""

from fastapi import APIRouter, Request
from starlette.responses import Response

from papertrade.auth.cookies import clear_session_cookies
from papertrade.auth.v1 import Caller, Ctx, WebUser, Writer
from papertrade.errors import ValidationFailed
from papertrade.kit.ids import Id
from papertrade.kit.responses import NativeJSONResponse
from papertrade.models import Profile, User
from papertrade.orders.pricing import Venue
from papertrade.profiles import avatar, service
from papertrade.profiles.schemas import (
    AccountDelete,
    PasswordChange,
    PasswordChanged,
    ProfileRead,
    ProfileUpdate,
    PublicPortfolioLink,
    PublicProfile,
)
from papertrade.users.passwords import too_common
from papertrade.users.service import get_user

router = APIRouter(tags=["profile"])


def _avatar_url(user_id: int) -> str:
    return f"/v1/users/{user_id}/avatar"


def _read(user: User, found: Profile) -> ProfileRead:
    return ProfileRead(
        user_id=user.id,
        display_name=user.display_name,
        bio=found.bio,
        time_zone=found.time_zone,
        locale=found.locale,
        initials=service.initials(service.public_name(user)),
        avatar_url=_avatar_url(user.id),
        has_avatar=found.avatar is not None,
    )


@router.get("/user/profile", response_model=ProfileRead)
async def my_profile(principal: Caller, ctx: Ctx) -> ProfileRead:
    """The caller's profile."""
    async with ctx.db.reader() as session:
        user = await get_user(session, principal.user_id)
        return _read(user, await service.profile_of(session, user.id))


@router.patch("/user/profile", response_model=ProfileRead)
async def update_profile(body: ProfileUpdate, principal: Writer, ctx: Ctx) -> ProfileRead:
    """Change the display name, bio, time zone or locale (only the fields sent)."""
    async with ctx.transaction() as uow:
        user = await get_user(uow.session, principal.user_id)
        found = await service.update_profile(uow, user, body.model_dump(exclude_none=True))
        return _read(user, found)


@router.put("/user/avatar", response_model=ProfileRead)
async def upload_avatar(request: Request, principal: Writer, ctx: Ctx) -> ProfileRead:
    """Upload an avatar: the raw image as the body (PNG, JPEG, WebP or GIF, at most
    MAX_BODY_BYTES, 4096 pixels a side); it is stored as a 256×256 PNG."""
    media_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if media_type not in avatar.MEDIA_TYPES:
        raise ValidationFailed(
            "Send the image as the body with Content-Type image/png, image/jpeg, image/webp "
            "or image/gif.",
            code="invalid_image",
        )
    png = avatar.normalise(await request.body())
    async with ctx.transaction() as uow:
        await service.set_avatar(uow, principal.user_id, png)
        user = await get_user(uow.session, principal.user_id)
        return _read(user, await service.profile_of(uow.session, user.id))


@router.delete("/user/avatar", response_model=ProfileRead)
async def remove_avatar(principal: Writer, ctx: Ctx) -> ProfileRead:
    """Back to the initials."""
    async with ctx.transaction() as uow:
        await service.set_avatar(uow, principal.user_id, None)
        user = await get_user(uow.session, principal.user_id)
        return _read(user, await service.profile_of(uow.session, user.id))


async def _live_user(ctx: Ctx, user_id: int) -> tuple[User, Profile]:
    async with ctx.db.reader() as session:
        user = await session.get(User, user_id)
        if user is None or service.is_deleted(user):
            raise service.not_found()
        return user, await service.profile_of(session, user_id)


@router.get("/users/{user_id}/profile", response_model=PublicProfile)
async def public_profile(user_id: Id, ctx: Ctx) -> PublicProfile:
    """What anyone may see of a user: the public name, bio, avatar and public portfolios
    (never the e-mail address)."""
    user, found = await _live_user(ctx, user_id)
    async with ctx.db.reader() as session:
        shown = await service.public_portfolios(session, user_id)
        strategies = await service.public_strategies(session, user_id)
    name = service.public_name(user)
    return PublicProfile(
        user_id=user.id,
        display_name=name,
        bio=found.bio,
        initials=service.initials(name),
        avatar_url=_avatar_url(user.id),
        portfolios=[PublicPortfolioLink(code=p.code, name=p.name) for p in shown],
        strategies=[PublicPortfolioLink(code=s.code, name=s.name) for s in strategies],
    )


@router.get("/users/{user_id}/avatar", response_class=Response)
async def avatar_image(user_id: Id, ctx: Ctx) -> Response:
    """The user's avatar (PNG), or their initials (SVG)."""
    user, found = await _live_user(ctx, user_id)
    headers = {"Cache-Control": "public, max-age=300"}
    if found.avatar is not None:
        return Response(found.avatar, media_type="image/png", headers=headers)
    svg = avatar.initials_svg(service.initials(service.public_name(user)), user.id)
    return Response(svg, media_type="image/svg+xml", headers=headers)


@router.post("/user/password", response_model=PasswordChanged)
async def change_password(body: PasswordChange, principal: WebUser, ctx: Ctx) -> PasswordChanged:
    """Change the password: the current one is required; every other session is signed out
    (this one stays)."""
    async with ctx.transaction() as uow:
        user = await get_user(uow.session, principal.user_id)
        if too_common(body.new_password, user.email):
            raise ValidationFailed(
                "new_password: this password is too easy to guess; choose another.",
            )
        count = await service.change_password(
            uow, user, body.current_password, body.new_password, principal.credential_id
        )
    return PasswordChanged(other_sessions_signed_out=count)


@router.post("/user/delete")
async def delete_account(body: AccountDelete, principal: WebUser, ctx: Ctx) -> Response:
    """Delete the account (docs/profile.md says what happens to everything); the password is
    required."""
    async with ctx.transaction() as uow:
        user = await get_user(uow.session, principal.user_id)
        await service.delete_account(uow, Venue.of(ctx), user, body.password)
    response = NativeJSONResponse({"ok": True})
    clear_session_cookies(response, ctx.settings)
    return response
