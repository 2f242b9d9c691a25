"""Errors of the market package beyond the feed protocol's StaleMarket and UnknownSymbol."""


class UpstreamError(Exception):
    """The upstream market data service failed or answered something unusable."""

    def __init__(self, message: str, *, status: int | None = None, endpoint: str = "") -> None:
        super().__init__(message)
        self.status = status  # HTTP status when the upstream answered, else None
        self.endpoint = endpoint
