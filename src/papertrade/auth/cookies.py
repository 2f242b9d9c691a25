"""The web session cookie and its CSRF companion."""

from starlette.responses import Response

from papertrade.config import Settings

SESSION_COOKIE = "pt_session"
CSRF_COOKIE = "csrf_token"
CSRF_HEADER = "X-CSRF-Token"


def set_session_cookies(response: Response, settings: Settings, token: str, csrf: str) -> None:
    """HttpOnly session cookie plus a readable CSRF cookie, both valid for the session lifetime."""
    max_age = settings.session_days * 86_400
    common = {
        "max_age": max_age,
        "path": "/",
        "domain": settings.cookie_domain,
        "secure": bool(settings.cookie_secure),
        "samesite": "lax",
    }
    response.set_cookie(SESSION_COOKIE, token, httponly=True, **common)  # type: ignore[arg-type]
    response.set_cookie(CSRF_COOKIE, csrf, httponly=False, **common)  # type: ignore[arg-type]


def clear_session_cookies(response: Response, settings: Settings) -> None:
    for name in (SESSION_COOKIE, CSRF_COOKIE):
        response.delete_cookie(
            name,
            path="/",
            domain=settings.cookie_domain,
            secure=bool(settings.cookie_secure),
            samesite="lax",
        )
