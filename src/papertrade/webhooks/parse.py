"""Alert bodies to field dictionaries: JSON when the body is JSON, else the plain-text grammar.

TradingView sends the alert message verbatim (`application/json` only when it is valid JSON), so
the body decides, never the header. Plain text is one command per line:

    <action> <symbol> [<qty>[%|usdt|u]] [@<price>] [x<leverage>] [key=value …]

or the comma-separated `key=value` flavour: `action=buy,symbol=BTCUSDT,qty=0.01`.
"""

import re
from typing import Any

import orjson

from papertrade.webhooks.errors import SignalError, UnparseableSignal, UnreplacedPlaceholder

MAX_COMMANDS = 10
PLACEHOLDER = re.compile(r"\{\{[^{}]{0,80}\}\}")
# ASCII digits only: `\d` would also take "０.００２" or "٠٫٥", which no one means as a size.
QTY = re.compile(r"^([0-9]+(?:\.[0-9]+)?|\.[0-9]+)(%|usdt|usd|u|\$)?$")
LEVERAGE = re.compile(r"^(?:x([0-9]{1,3})|([0-9]{1,3})x)$")
KV_SPLIT = re.compile(r"[,\s]+(?=[A-Za-z_][A-Za-z0-9_]*\s*=)")
GRAMMAR = (
    "Plain-text alerts read `<action> <symbol> [<qty>[%|usdt]] [@<price>] [x<leverage>]`, "
    "e.g. `buy BTCUSDT 0.01`, `sell ETHUSDT 25% @3500 x5`, `close BTCUSDT`."
)
QTY_TYPES = {
    None: "base",
    "%": "percent",
    "usdt": "quote",
    "usd": "quote",
    "u": "quote",
    "$": "quote",
}


def placeholder_error(where: str, placeholder: str) -> UnreplacedPlaceholder:
    return UnreplacedPlaceholder(
        f"{where} still contains the TradingView placeholder {placeholder}: TradingView did not "
        "replace it. Check its spelling; {{strategy.*}} placeholders work only in strategy "
        "alerts, and {{plot_N}} needs the indicator to have that plot."
    )


def parse_body(text: str) -> tuple[str, list[dict[str, Any]]]:
    """("json" | "text", one field dictionary per command)."""
    stripped = text.strip()
    if not stripped:
        raise UnparseableSignal(
            "The alert body is empty: put the order in the alert's message, e.g. "
            '`buy BTCUSDT 0.01` or {"action": "buy", "symbol": "BTCUSDT", "qty": 0.01}.'
        )
    if stripped[0] in "{[":
        return "json", _json_commands(stripped)
    lines = [line.strip() for line in stripped.splitlines() if line.strip()]
    if len(lines) > MAX_COMMANDS:
        raise UnparseableSignal(f"An alert holds at most {MAX_COMMANDS} commands (lines).")
    return "text", [parse_line(line, n) for n, line in enumerate(lines, 1)]


def _json_commands(stripped: str) -> list[dict[str, Any]]:
    try:
        value = orjson.loads(stripped)
    except orjson.JSONDecodeError as exc:
        found = PLACEHOLDER.search(stripped)
        if found:
            raise UnreplacedPlaceholder(
                f"The message is not valid JSON because {found.group()} was not replaced by "
                "TradingView. Check the placeholder's spelling, and quote numeric placeholders "
                '("price": "{{close}}") so an empty or NaN value still makes valid JSON.'
            ) from exc
        raise UnparseableSignal(
            f"The message starts like JSON but is not valid JSON ({exc}). A common cause is an "
            'unquoted placeholder that became NaN or empty: quote it, e.g. "price": "{{close}}".'
        ) from exc
    items = value if isinstance(value, list) else [value]
    if not items or len(items) > MAX_COMMANDS or not all(isinstance(i, dict) for i in items):
        raise UnparseableSignal(
            f"A JSON alert is one object (or a list of at most {MAX_COMMANDS} objects) with "
            'fields such as "action", "symbol" and "qty".'
        )
    return items


def parse_line(line: str, number: int) -> dict[str, Any]:
    """One plain-text command to a field dictionary."""
    where = f"Line {number}"
    found = PLACEHOLDER.search(line)
    if found:
        raise placeholder_error(where, found.group())
    tokens = line.split()
    if "=" in tokens[0]:
        return _key_values(line, where)
    if len(tokens) < 2:
        raise SignalError(f"{where}: after the action comes the symbol. {GRAMMAR}")
    fields: dict[str, Any] = {"action": tokens[0], "symbol": tokens[1]}
    rest = iter(tokens[2:])
    for token in rest:
        low = token.lower()
        if "=" in token:
            key, _, value = token.partition("=")
            fields[key.lower()] = value
        elif low.startswith("@"):
            price = low[1:] or next(rest, "")
            if not price:
                raise SignalError(f"{where}: '@' must be followed by a limit price. {GRAMMAR}")
            fields["price"] = price
            fields.setdefault("order_type", "limit")
        elif match := LEVERAGE.match(low):
            fields["leverage"] = match.group(1) or match.group(2)
        elif match := QTY.match(low):
            if "qty" in fields:
                raise SignalError(f"{where}: two quantities ({fields['qty']} and {token}).")
            fields["qty"] = match.group(1)
            fields["qty_type"] = QTY_TYPES[match.group(2)]
        else:
            raise SignalError(f"{where}: unknown token {token!r}. {GRAMMAR}")
    return fields


def _key_values(line: str, where: str) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    for part in KV_SPLIT.split(line.strip().strip(",")):
        key, sep, value = part.partition("=")
        if not sep or not key.strip():
            raise SignalError(f"{where}: expected key=value pairs, got {part!r}.")
        fields[key.strip().lower()] = value.strip().rstrip(",")
    return fields
