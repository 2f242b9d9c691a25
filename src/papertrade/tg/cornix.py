"""Cornix-style signal text (domain rules B2.8) to one signal: pair, side, entries, targets,
stops, leverage. What is wrong comes back as a SignalError whose message says what to fix.

    ⚡⚡ #BTC/USDT ⚡⚡               pair: `#BTC/USDT`, `BTC/USDT`, `#BTCUSDT`
    Signal Type: Regular (Long)    optional; must agree with the stop's side
    Leverage: Cross (10X)          `Leverage` or `Lev`, then `<n>x`
    Entry Targets:                 `Entry`/`Buy`, numbers on the line or numbered below;
    1) 67000                       `a-b` is two entries, `Buy zone a-b` a range (its middle)
    Take-Profit Targets:           `Take Profit`/`Target`/`TP`/`Sell`: 1 to 6 prices
    1) 68000
    Stop Targets:                  `Stop`/`SL`/`Stop Loss`: required; a long's stop is below
    1) 66000                       its entry, a short's above
"""

import re
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation

from papertrade.webhooks.errors import SignalError

MAX_TP = 6
PAIR = re.compile(r"#?\b([A-Z0-9]{2,15})\s*/?\s*(USDT)\b", re.IGNORECASE)
NUMBER = re.compile(r"(?<![\w.])[0-9]+(?:\.[0-9]+)?(?![\w.])")
LEVERAGE = re.compile(r"\b(?:leverage|lev)\b.*?(\d+)\s*x", re.IGNORECASE)
NUMBERED = re.compile(r"^\s*\d+\s*[).:-]\s*")
SECTIONS = (
    ("stop", re.compile(r"\b(stop\s*loss|stop|sl)\b", re.IGNORECASE)),
    ("tp", re.compile(r"\b(take[\s-]*profit|targets?|tp\d?|sell)\b", re.IGNORECASE)),
    ("entry", re.compile(r"\b(entry|entries|buy|enter)\b", re.IGNORECASE)),
)
ZONE = re.compile(r"\bzone\b", re.IGNORECASE)
HOW = (
    "Write the pair (#BTC/USDT), an Entry line, Take-Profit targets and a Stop, e.g.\n"
    "#BTC/USDT\nEntry: 67000\nTake-Profit Targets: 68000 69000\nStop: 66000"
)


@dataclass
class CornixSignal:
    symbol: str
    side: str  # buy (long) | sell (short)
    entries: list[Decimal] = field(default_factory=list)
    take_profits: list[Decimal] = field(default_factory=list)
    stops: list[Decimal] = field(default_factory=list)
    leverage: int | None = None

    @property
    def entry(self) -> Decimal:
        """The price the paper order is placed at: the first entry (the nearest for a range)."""
        return self.entries[0]


def _prices(text: str) -> list[Decimal]:
    found: list[Decimal] = []
    for match in NUMBER.findall(text):
        try:
            value = Decimal(match)
        except InvalidOperation:
            continue
        if value > 0:
            found.append(value)
    return found


def _section(line: str) -> str | None:
    """The section a line opens: its first keyword's ("Entry Targets" is an entry line)."""
    found = [(m.start(), name) for name, pattern in SECTIONS if (m := pattern.search(line))]
    return min(found)[1] if found else None


def _collect(text: str) -> tuple[dict[str, list[Decimal]], int | None]:
    """Prices by section (entry, tp, stop), and the leverage, line by line."""
    lists: dict[str, list[Decimal]] = {"entry": [], "tp": [], "stop": []}
    current: str | None = None
    leverage = None
    for raw in text.splitlines():
        line = raw.strip()
        lev = LEVERAGE.search(line)
        if lev is not None:
            leverage = int(lev.group(1))
            continue
        if not line or (PAIR.search(line) and _section(PAIR.sub("", line)) is None):
            continue  # blank, or the pair's own line
        section = _section(line)
        if section is not None:
            current, body = section, SECTIONS_BODY.sub("", line, count=1)
        elif current is not None:
            body = NUMBERED.sub("", line)
        else:
            continue
        prices = _prices(body)
        if current == "entry" and ZONE.search(line) and len(prices) == 2:
            prices = [(prices[0] + prices[1]) / 2]
        lists[current].extend(prices)
    return lists, leverage


def parse(text: str) -> CornixSignal:
    pair = PAIR.search(text)
    if pair is None:
        raise SignalError(f"No pair found. {HOW}", code="invalid_signal")
    symbol = (pair.group(1) + pair.group(2)).upper()
    lists, leverage = _collect(text)
    entries, tps, stops = lists["entry"], lists["tp"], lists["stop"]
    if not entries:
        raise SignalError(f"No entry price found: add a line 'Entry: <price>'. {HOW}")
    if not stops:
        raise SignalError(
            "No stop found: Cornix signals need a 'Stop: <price>' line (it also tells long "
            "from short)."
        )
    if len(tps) > MAX_TP:
        raise SignalError(f"{len(tps)} take-profit targets; at most {MAX_TP}.")
    side = "buy" if stops[0] < entries[0] else "sell"
    _check_sides(text, side, entries[0], stops[0], tps)
    if leverage is not None and not 1 <= leverage <= 125:
        raise SignalError("Leverage must be from 1x to 125x.")
    return CornixSignal(symbol, side, entries, tps, stops, leverage)


def _check_sides(text: str, side: str, entry: Decimal, stop: Decimal, tps: list[Decimal]) -> None:
    stated = re.search(r"\b(long|short)\b", text, re.IGNORECASE)
    if stated is not None and (stated.group(1).lower() == "long") != (side == "buy"):
        where = "below" if stated.group(1).lower() == "long" else "above"
        raise SignalError(
            f"The stop {stop} is on the wrong side: a {stated.group(1).lower()}'s stop must "
            f"be {where} the entry {entry}."
        )
    wrong = [tp for tp in tps if (tp <= entry) == (side == "buy")]
    if wrong:
        raise SignalError(
            f"Take-profit {wrong[0]} is on the wrong side of the entry {entry} for a "
            f"{'long' if side == 'buy' else 'short'}."
        )


# Strips the keyword that opened a section (and a following "Targets"/"zone"/":") from its line.
SECTIONS_BODY = re.compile(
    r"^.*?\b(stop\s*loss|stop|sl|take[\s-]*profit|targets?|tp\d?|sell|entry|entries|buy|enter)"
    r"\b(\s*(targets?|zone))?(\s*\d{1,2}\s*[:)])?\s*[:=]?",
    re.IGNORECASE,
)
