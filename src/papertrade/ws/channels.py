"""Channel names: what a client may subscribe to, parsed and put in canonical form."""

from dataclasses import dataclass

from papertrade.market.feed import INTERVALS_MS

MARKET_KINDS = ("mark_price", "ticker", "kline")
PORTFOLIO_KINDS = ("orders", "positions", "balance", "signals")
INBOX = "inbox"  # the caller's own notifications (topic "inbox:<user id>")
BACKTESTS = "backtests"  # the progress of the caller's backtests (topic "backtests:<user id>")
SOCIAL = "social"  # the caller's copy-trading and subscription events (topic "social:<user id>")
USER_KINDS = (INBOX, BACKTESTS, SOCIAL)  # channels of the caller's own account
MAX_NAME = 64

# Which portfolio channel each domain event goes to.
EVENT_CHANNEL = {
    "order": "orders",
    "position": "positions",
    "balance": "balance",
    "signal": "signals",
    "conditional": "orders",  # stops and take-profits: waiting, triggered, cancelled
}


class ChannelError(ValueError):
    """A channel name the client got wrong; the message says how to write it."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True, slots=True)
class Channel:
    """One parsed channel; `portfolio_id is None` on a portfolio kind means "all of mine"."""

    kind: str
    symbol: str | None = None
    interval: str | None = None
    portfolio_id: int | None = None

    @property
    def name(self) -> str:
        if self.kind == "kline":
            return f"kline:{self.symbol}:{self.interval}"
        if self.symbol is not None:
            return f"{self.kind}:{self.symbol}"
        if self.portfolio_id is not None:
            return f"{self.kind}:{self.portfolio_id}"
        return self.kind

    @property
    def is_portfolio(self) -> bool:
        return self.kind in PORTFOLIO_KINDS


def channel_for_event(event_type: str) -> str | None:
    """`order.filled` → `orders`; None for events no channel carries."""
    return EVENT_CHANNEL.get(event_type.partition(".")[0])


def _portfolio_id(text: str, name: str) -> int:
    if not (text.isascii() and text.isdigit()) or len(text) > 18:
        raise ChannelError(
            "invalid_channel", f"{name!r}: the portfolio id must be a number, e.g. 'orders:12'."
        )
    return int(text)


def parse(name: object) -> list[Channel]:
    """Channels named by one subscription string (`portfolio:<id>` names four)."""
    if not isinstance(name, str) or not name or len(name) > MAX_NAME:
        raise ChannelError("invalid_channel", f"A channel is a short string, got {name!r}.")
    kind, _, rest = name.strip().partition(":")
    kind = kind.lower()
    if kind == "portfolio":
        pid = _portfolio_id(rest, name)
        return [Channel(k, portfolio_id=pid) for k in PORTFOLIO_KINDS]
    if kind in PORTFOLIO_KINDS:
        return [Channel(kind, portfolio_id=_portfolio_id(rest, name) if rest else None)]
    if kind in USER_KINDS and not rest:
        return [Channel(kind)]
    if kind == "mark_price":
        return [Channel(kind, symbol=rest.upper() if rest else None)]
    if kind == "ticker":
        if not rest:
            raise ChannelError("invalid_channel", "Name the symbol: 'ticker:BTCUSDT'.")
        return [Channel(kind, symbol=rest.upper())]
    if kind == "kline":
        symbol, _, interval = rest.partition(":")
        if not symbol or interval not in INTERVALS_MS:
            raise ChannelError(
                "invalid_channel",
                f"{name!r}: write 'kline:<SYMBOL>:<interval>' with an interval of "
                f"{', '.join(INTERVALS_MS)}.",
            )
        return [Channel(kind, symbol=symbol.upper(), interval=interval)]
    raise ChannelError(
        "unknown_channel",
        f"Unknown channel {name!r}. Market: mark_price, mark_price:<SYMBOL>, ticker:<SYMBOL>, "
        "kline:<SYMBOL>:<interval>. Portfolio: orders:<id>, positions:<id>, balance:<id>, "
        "signals:<id>, portfolio:<id> (all four). Account: inbox, backtests, social.",
    )
