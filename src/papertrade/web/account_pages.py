"""The pages the account mails link to (docs/email.md): confirming an address, choosing a new
password, and asking for a reset. Each is a shell whose module posts the token to the /v1 API:
a GET only shows the page, so a mail scanner that opens links uses up no token."""

from typing import Annotated

from fastapi import APIRouter, Query, Request
from starlette.responses import Response

from papertrade.web.routes import PAGE_METHODS, _page, _viewer

router = APIRouter(include_in_schema=False)
Token = Annotated[str, Query(max_length=200)]


@router.api_route("/email/verify", methods=PAGE_METHODS)
async def verify_email_page(request: Request, token: Token = "") -> Response:
    return _page(
        request,
        "email_verify.html",
        title="Confirm your email address",
        script="email_verify",
        viewer=await _viewer(request),
        token=token,
    )


@router.api_route("/password/reset", methods=PAGE_METHODS)
async def reset_password_page(request: Request, token: Token = "") -> Response:
    return _page(
        request,
        "password_reset.html",
        title="Choose a new password",
        script="password_reset",
        viewer=await _viewer(request),
        token=token,
    )


@router.api_route("/password/forgot", methods=PAGE_METHODS)
async def forgot_password_page(request: Request) -> Response:
    return _page(
        request,
        "password_forgot.html",
        title="Forgot your password",
        script="password_forgot",
        viewer=await _viewer(request),
    )
