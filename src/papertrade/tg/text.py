"""Message text for Telegram: HTML escaping, the 4096-character split, the Cornix block."""

import html
from collections.abc import Sequence
from decimal import Decimal

from papertrade.kit.decimals import plain

LIMIT = 4096  # characters per message (Bot API)


def escape(text: str) -> str:
    """User-provided text inside parse_mode=HTML: only < > & (and quotes) are special."""
    return html.escape(text, quote=False)


def split(text: str, limit: int = LIMIT) -> list[str]:
    """Pieces of at most `limit` characters, cut at a line end where there is one, never
    inside an HTML entity (`&amp;` stays whole)."""
    pieces: list[str] = []
    while len(text) > limit:
        cut = text.rfind("\n", 0, limit + 1)
        if cut <= 0:
            cut = limit
            entity = text.rfind("&", cut - 8, cut)
            if entity != -1 and ";" not in text[entity:cut]:
                cut = entity
        pieces.append(text[:cut])
        text = text[cut:].lstrip("\n")
    if text or not pieces:
        pieces.append(text)
    return pieces


def notification(title: str, body: str) -> str:
    return f"<b>{escape(title)}</b>\n{escape(body)}" if body else f"<b>{escape(title)}</b>"


def linked(html_text: str, url: str) -> str:
    """A signal block or close notice with its footer's link (domain rules B2.7) on the last
    line: the page of the portfolio or strategy it comes from, escaped for the attribute too."""
    shown = html.escape(url, quote=True)
    return f'{html_text}\n<a href="{shown}">{shown}</a>'


def _tag(symbol: str) -> str:
    """The pair as Cornix tags it: BTCUSDT → #BTC/USDT."""
    base, quote = (symbol[:-4], symbol[-4:]) if symbol.endswith("USDT") else (symbol, "")
    return f"#{escape(f'{base}/{quote}' if quote else base)}"


def _signed(value: Decimal) -> str:
    return f"+{plain(value)}" if value >= 0 else plain(value)


def close_notice(
    symbol: str, price: Decimal, pnl: Decimal, pnl_pct: Decimal, footer: str = ""
) -> str:
    """A position closed, as Cornix-style channels announce it (domain rules B2.7):
    `#BTC/USDT closed at 68012.5 (+1.52% | +15.2 USDT)`."""
    line = f"{_tag(symbol)} closed at {plain(price)} ({_signed(pnl_pct)}% | {_signed(pnl)} USDT)"
    return f"{line}\n\n{escape(footer)}" if footer else line


def cornix_block(
    symbol: str,
    side: str,
    *,
    leverage: int | None,
    margin_type: str = "cross",
    entries: Sequence[Decimal],
    take_profits: Sequence[Decimal] = (),
    stops: Sequence[Decimal] = (),
    footer: str = "",
) -> str:
    """A signal in the Cornix-compatible layout (domain rules B2.7), so it can be forwarded."""
    lines = [_tag(symbol), f"Signal Type: Regular ({'Long' if side == 'buy' else 'Short'})"]
    if leverage is not None:
        lines.append(f"Leverage: {escape(margin_type.capitalize())} ({leverage}X)")
    for heading, prices in (
        ("Entry Targets:", entries),
        ("Take-Profit Targets:", take_profits),
        ("Stop Targets:", stops),
    ):
        if prices:
            lines.append(heading)
            lines.extend(f"{i}) {plain(p)}" for i, p in enumerate(prices, 1))
    if footer:
        lines += ["", escape(footer)]
    return "\n".join(lines)
