"""Errors of the order domain (kernel rule violations are mapped where they are raised)."""

from papertrade.errors import Conflict, NotFound, PapertradeError, ServiceUnavailable


class OrderNotFound(NotFound):
    code = "order_not_found"


class OrderNotOpen(Conflict):
    code = "order_not_open"


class DuplicateClientOrderId(Conflict):
    code = "duplicate_client_order_id"


class InvalidSymbol(PapertradeError):
    status_code = 400
    code = "invalid_symbol"


class MarketDataStale(ServiceUnavailable):
    code = "market_data_stale"


class MarketUnavailable(ServiceUnavailable):
    code = "market_unavailable"
