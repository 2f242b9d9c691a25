"""Webhook answers for permanent problems: a 4xx status and a message saying what to fix."""

from papertrade.errors import PapertradeError


class SignalError(PapertradeError):
    """The alert cannot be used as sent (400 unless a subclass says otherwise)."""

    status_code = 400
    code = "invalid_signal"


class UnparseableSignal(SignalError):
    code = "unparseable_signal"


class UnreplacedPlaceholder(SignalError):
    code = "unreplaced_placeholder"


class NotExecutable(SignalError):
    """Well formed, but it cannot be carried out (unknown symbol, size below minimum, …)."""

    status_code = 422
    code = "not_executable"


class StaleSignal(SignalError):
    status_code = 409
    code = "stale_signal"


class PayloadTooLarge(SignalError):
    status_code = 413
    code = "payload_too_large"


class WebhookNotFound(PapertradeError):
    status_code = 404
    code = "webhook_not_found"


class WebhookRevoked(PapertradeError):
    status_code = 403
    code = "webhook_revoked"
