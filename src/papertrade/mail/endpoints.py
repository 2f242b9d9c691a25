"""Email: address state and verification, password reset, unsubscribe links."""

from typing import Annotated

from fastapi import APIRouter, Query, Request
from sqlalchemy import select

from papertrade.auth.client_ip import client_key
from papertrade.auth.v1 import Caller, Ctx, WebUser, Writer
from papertrade.kit.ids import Id
from papertrade.mail import accounts, digest, service
from papertrade.mail.accounts import InvalidToken
from papertrade.mail.schemas import (
    Done,
    EmailAddressState,
    EmailChange,
    EmailFrequency,
    EmailMessagePage,
    EmailMessageRead,
    ForgotPassword,
    ResetPassword,
    TokenBody,
    Unsubscribed,
    VerificationSent,
)
from papertrade.models import EmailMessage, EmailSuppression, NotificationPreference, User
from papertrade.notifications.catalogue import BY_NAME
from papertrade.users import throttle
from papertrade.users.service import normalise_email

router = APIRouter(tags=["email"])


@router.get("/user/email", response_model=EmailAddressState)
async def email_state(principal: Caller, ctx: Ctx) -> EmailAddressState:
    """The account's address: verified, and whether mail to it is suppressed (the banner)."""
    async with ctx.transaction() as uow:
        user = await uow.session.get(User, principal.user_id)
        assert user is not None
        return EmailAddressState.model_validate(await accounts.address_state(uow, user))


@router.put("/user/email/frequency", response_model=EmailAddressState)
async def set_frequency(body: EmailFrequency, principal: Writer, ctx: Ctx) -> EmailAddressState:
    """How notification mail arrives: instant, daily (a digest of the unread ones) or off."""
    async with ctx.transaction() as uow:
        await digest.set_frequency(uow, principal.user_id, body.frequency)
        user = await uow.session.get(User, principal.user_id)
        assert user is not None
        return EmailAddressState.model_validate(await accounts.address_state(uow, user))


@router.get("/user/email/messages", response_model=EmailMessagePage)
async def list_messages(
    principal: Caller,
    ctx: Ctx,
    before_id: Id | None = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
) -> EmailMessagePage:
    """The mail sent to you, newest first, with each one's delivery status."""
    statement = select(EmailMessage).where(EmailMessage.user_id == principal.user_id)
    if before_id is not None:
        statement = statement.where(EmailMessage.id < before_id)
    async with ctx.db.reader() as session:
        rows = await session.scalars(statement.order_by(EmailMessage.id.desc()).limit(limit))
        found = [EmailMessageRead.model_validate(r) for r in rows]
    return EmailMessagePage(
        messages=found, next_before_id=found[-1].id if len(found) == limit else None
    )


@router.post("/user/email/verification", status_code=202, response_model=VerificationSent)
async def send_verification(principal: WebUser, ctx: Ctx) -> VerificationSent:
    """Mail a link that confirms the account's address."""
    async with ctx.transaction() as uow:
        user = await uow.session.get(User, principal.user_id)
        assert user is not None
        sent = await accounts.request_verification(uow, user, ctx.settings.public_base_url)
        return VerificationSent(sent=sent, email=user.email)


@router.post("/user/email", status_code=202, response_model=VerificationSent)
async def change_email(
    body: EmailChange, request: Request, principal: WebUser, ctx: Ctx
) -> VerificationSent:
    """Change the address: the current password is required, and a link goes to the new
    address; the account moves to it only when the link is opened (sessions stay). Wrong
    passwords count against the sign-in budgets (429), so a borrowed session cannot guess."""
    new_email = normalise_email(str(body.new_email))
    async with ctx.transaction() as uow:
        user = await uow.session.get(User, principal.user_id)
        assert user is not None
        address = client_key(request.scope, ctx.settings)
        attempt = await throttle.begin_sign_in(ctx, user.email, address)
        sent = await accounts.request_change(
            uow, user, new_email, body.current_password, ctx.settings.public_base_url
        )
    await throttle.signed_in(ctx, attempt)
    return VerificationSent(sent=sent, email=new_email)


async def _verify(token: str, ctx: Ctx) -> EmailAddressState:
    async with ctx.transaction() as uow:
        user = await accounts.verify(uow, token)
        return EmailAddressState.model_validate(await accounts.address_state(uow, user))


@router.get("/auth/email/verify", response_model=EmailAddressState)
async def verify_by_link(
    token: Annotated[str, Query(max_length=200)], ctx: Ctx
) -> EmailAddressState:
    """The link in the verification mail."""
    return await _verify(token, ctx)


@router.post("/auth/email/verify", response_model=EmailAddressState)
async def verify(body: TokenBody, ctx: Ctx) -> EmailAddressState:
    """Confirm the address with the mailed token."""
    return await _verify(body.token, ctx)


@router.post("/auth/password/forgot", status_code=202, response_model=Done)
async def forgot_password(body: ForgotPassword, ctx: Ctx) -> Done:
    """Mail a reset token to the address if it has an account; the answer is the same either
    way (no one learns which addresses have accounts)."""
    async with ctx.transaction() as uow:
        await accounts.request_reset(uow, normalise_email(body.email), ctx.settings.public_base_url)
    return Done()


@router.post("/auth/password/reset", response_model=Done)
async def reset_password(body: ResetPassword, ctx: Ctx) -> Done:
    """Set a new password with the mailed token; every session of the account is signed out."""
    async with ctx.transaction() as uow:
        await accounts.reset_password(uow, body.token, body.password)
    return Done()


async def _unsubscribe(token: str, ctx: Ctx) -> Unsubscribed:
    found = service.read_unsubscribe_token(ctx.settings.resolved_secret_key(), token)
    known = (service.ALL_KINDS, digest.KIND)
    if found is None or (found[1] not in known and found[1] not in BY_NAME):
        raise InvalidToken("This unsubscribe link is not valid.", code="invalid_token")
    user_id, kind = found
    async with ctx.transaction() as uow:
        user = await uow.session.get(User, user_id)
        if user is None:
            raise InvalidToken("This unsubscribe link is not valid.", code="invalid_token")
        if kind == service.ALL_KINDS:
            if await uow.session.get(EmailSuppression, user.email) is None:
                uow.session.add(EmailSuppression(address=user.email, reason="unsubscribed"))
        elif kind == digest.KIND:  # the digest's link: no more notification mail
            await digest.set_frequency(uow, user_id, "off")
        else:
            row = await uow.session.get(NotificationPreference, (user_id, kind))
            if row is None:
                defaults = BY_NAME[kind].defaults
                uow.session.add(
                    NotificationPreference(
                        user_id=user_id,
                        kind=kind,
                        inbox=defaults.inbox,
                        telegram=defaults.telegram,
                        email=False,
                    )
                )
            else:
                row.email = False
    return Unsubscribed(unsubscribed=kind)


@router.get("/email/unsubscribe", response_model=Unsubscribed)
async def unsubscribe_by_link(
    token: Annotated[str, Query(max_length=200)], ctx: Ctx
) -> Unsubscribed:
    """The link at the foot of every non-transactional mail (no sign-in needed)."""
    return await _unsubscribe(token, ctx)


@router.post("/email/unsubscribe", response_model=Unsubscribed)
async def unsubscribe_one_click(
    token: Annotated[str, Query(max_length=200)], ctx: Ctx
) -> Unsubscribed:
    """RFC 8058 one-click unsubscribe (mail clients POST to the List-Unsubscribe address)."""
    return await _unsubscribe(token, ctx)
