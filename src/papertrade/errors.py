"""The one error base of the domain; each surface renders it in its own shape."""


class PapertradeError(Exception):
    """A failure the user can act on: a stable code, a human message and an HTTP status."""

    status_code = 400
    code = "bad_request"

    def __init__(self, message: str, *, code: str | None = None, status_code: int | None = None):
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
        if status_code is not None:
            self.status_code = status_code


class BadRequest(PapertradeError):
    status_code = 400
    code = "bad_request"


class ValidationFailed(PapertradeError):
    status_code = 422
    code = "validation_error"


class Unauthorized(PapertradeError):
    status_code = 401
    code = "unauthorized"


class Forbidden(PapertradeError):
    status_code = 403
    code = "forbidden"


class NotFound(PapertradeError):
    status_code = 404
    code = "not_found"


class Conflict(PapertradeError):
    status_code = 409
    code = "conflict"


class RateLimited(PapertradeError):
    status_code = 429
    code = "rate_limited"

    def __init__(self, message: str, *, retry_after: int):
        super().__init__(message)
        self.retry_after = retry_after


class ServiceUnavailable(PapertradeError):
    status_code = 503
    code = "service_unavailable"
