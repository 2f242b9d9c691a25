"""A field dictionary (from JSON or text) to one validated, normalised command (domain rules B1)."""

import re
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from decimal import Decimal, InvalidOperation
from typing import Any

from papertrade.trading.values import Instrument
from papertrade.webhooks.errors import NotExecutable, SignalError
from papertrade.webhooks.parse import PLACEHOLDER, placeholder_error

ALIASES = {
    "symbol": ("symbol", "ticker", "instrument", "pair", "tv_instrument"),
    "action": ("action", "signal", "side"),
    "position": ("position", "sentiment", "market_position", "marketposition"),
    "position_size": ("position_size", "positionsize"),
    "qty": ("qty", "quantity", "amount", "contracts", "size"),
    "qty_type": ("qty_type", "quantity_type", "quantitytype", "amount_type"),
    "order_type": ("order_type", "ordertype", "type"),
    "price": ("price", "limit_price", "limitprice"),
    "leverage": ("leverage", "lev"),
    "margin_mode": ("margin_mode", "marginmode"),
    "tp": ("tp", "take_profit", "takeprofit"),
    "sl": ("sl", "stop_loss", "stoploss"),
    "id": ("id", "order_id", "tag"),
    "time": ("time", "timestamp", "timenow"),
    "max_lag": ("max_lag", "maxlag"),
    "idempotency_key": ("idempotency_key", "idempotencykey"),
    "comment": ("comment",),
    "secret": ("secret", "token", "key", "signaltoken"),  # accepted and ignored: the URL is the key
}
_CANONICAL = {alias: name for name, aliases in ALIASES.items() for alias in aliases}

ACTIONS = {
    **dict.fromkeys(("buy", "long", "enter_long", "open_long"), "buy"),
    **dict.fromkeys(("sell", "short", "enter_short", "open_short"), "sell"),
    **dict.fromkeys(("close_long", "exit_long", "closelong"), "close_long"),
    **dict.fromkeys(("close_short", "exit_short", "closeshort"), "close_short"),
    **dict.fromkeys(("close", "exit", "flat", "closeall", "close_all", "exit_all"), "close"),
    **dict.fromkeys(("reverse", "flip"), "reverse"),
    **dict.fromkeys(("cancel", "cancel_all"), "cancel"),
    "add": "add",
}
POSITIONS = {
    "long": "long",
    "bullish": "long",
    "short": "short",
    "bearish": "short",
    "flat": "flat",
}
QTY_TYPES = {
    "base": "base",
    "contracts": "base",
    "coin": "base",
    "quote": "quote",
    "usdt": "quote",
    "usd": "quote",
    "percent_equity": "percent_equity",
    "percent_of_equity": "percent_equity",
    "percent_position": "percent_position",
    "percent_of_position": "percent_position",
    "percent": "percent",
}
# A number as an alert may write it, after thousands separators are dropped: ASCII digits, an
# optional point and exponent ({{close}} can come out as 1.5E-7). Python's Decimal alone would
# also read "１", "٥" and "1_000".
NUMBER = re.compile(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?")
DIGITS = re.compile(r"[0-9]+")
DEFAULT_MAX_LAG_S = 60
MAX_LAG_LIMIT_S = 300
MAX_TP = 6


@dataclass(slots=True)
class Command:
    """One order instruction of an alert, with every value checked and normalised."""

    line: int
    action: str
    symbol: str
    qty: Decimal | None = None
    qty_type: str = "base"  # base | quote | percent_equity | percent_position | percent
    order_type: str = "market"
    price: Decimal | None = None  # the limit price, or the signal price of a market order
    leverage: int | None = None
    position: str | None = None  # target mode: long | short | flat
    position_size: Decimal | None = None
    tp: list[Decimal] = field(default_factory=list)
    sl: Decimal | None = None  # stop-loss trigger price: a STOP_MARKET closing the position
    time_ms: int | None = None
    max_lag_s: int = DEFAULT_MAX_LAG_S
    idempotency_key: str | None = None
    tag: str | None = None
    comment: str | None = None
    extras: dict[str, Any] = field(default_factory=dict)

    @property
    def target_mode(self) -> bool:
        return self.position is not None or self.position_size is not None

    def as_json(self) -> dict[str, Any]:
        """The parse result as kept in the signal history."""
        out = {k: v for k, v in asdict(self).items() if v not in (None, [], {})}
        for key in ("qty", "price", "position_size", "sl"):
            if key in out:
                out[key] = str(out[key])
        if "tp" in out:
            out["tp"] = [str(p) for p in out["tp"]]
        return out


def normalise_symbol(raw: str, instruments: dict[str, Instrument]) -> str:
    """`BINANCE:BTCUSDT.P`, `btc/usdt`, `BTC-USDT-SWAP`, `XBTUSDT` → `BTCUSDT` (if listed)."""
    text = raw.strip().upper().rsplit(":", 1)[-1]
    for suffix in (".P", ".PERP", "-SWAP", "_PERP", "PERP"):
        if text.endswith(suffix):
            text = text[: -len(suffix)]
            break
    text = text.replace("/", "").replace("-", "").replace("_", "")
    if text.startswith("XBT"):
        text = "BTC" + text[3:]
    for candidate in (text, text + "USDT", text[:-3] + "USDT" if text.endswith("USD") else ""):
        if candidate in instruments:
            return candidate
    shown = raw if len(raw) <= 30 else raw[:30] + "…"
    raise NotExecutable(
        f"Unknown symbol {shown!r}: this service trades USDT perpetuals such as BTCUSDT; see "
        "GET /v1/market/symbols.",
        code="unknown_symbol",
    )


def _text(name: str, value: Any, where: str) -> str:
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise SignalError(f"{where}: {name} must be a string or number, got {value!r}.")
    text = str(value).strip()
    found = PLACEHOLDER.search(text)
    if found:
        raise placeholder_error(f"{where}: field '{name}'", found.group())
    return text


def _decimal(name: str, value: Any, where: str, *, positive: bool = True) -> Decimal:
    text = _text(name, value, where).replace(",", "")
    try:
        number = Decimal(text) if NUMBER.fullmatch(text) else Decimal("NaN")
    except InvalidOperation:  # pragma: no cover - NUMBER admits only valid literals
        number = Decimal("NaN")
    if not number.is_finite() or (positive and number <= 0):
        raise SignalError(
            f"{where}: {name} must be a {'positive ' if positive else ''}number, got {text!r}. "
            "An empty value or NaN usually means a placeholder had no value when the alert fired."
        )
    return number


def _time_ms(value: Any, where: str) -> int:
    text = _text("time", value, where)
    if DIGITS.fullmatch(text):
        number = int(text)
        return number if number > 10**11 else number * 1000
    try:
        moment = datetime.fromisoformat(text.replace("z", "Z"))
    except ValueError as exc:
        raise SignalError(
            f"{where}: time {text!r} is not ISO-8601 (use {{{{timenow}}}}) or epoch seconds/ms."
        ) from exc
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return int(moment.timestamp() * 1000)


def _canonical(fields: dict[str, Any], where: str) -> tuple[dict[str, Any], dict[str, Any]]:
    known: dict[str, Any] = {}
    extras: dict[str, Any] = {}
    for key, value in fields.items():
        name = _CANONICAL.get(str(key).strip().lower())
        if name is None:
            extras[str(key)[:40]] = value if isinstance(value, str | int | float | bool) else "…"
        elif name not in known:
            known[name] = value
    return known, extras


def build(fields: dict[str, Any], line: int, instruments: dict[str, Instrument]) -> Command:
    """Validate one command's fields; SignalError (400) or NotExecutable (422) says what to fix."""
    where = f"Command {line}"
    known, extras = _canonical(fields, where)
    raw_action = known.get("action")
    if raw_action is None:
        raise SignalError(f"{where}: 'action' is missing (buy, sell, close, …).")
    action_text = _text("action", raw_action, where).lower().replace("-", "_").replace(" ", "_")
    action = ACTIONS.get(action_text)
    if action is None:
        raise SignalError(
            f"{where}: unknown action {action_text[:30]!r}; use buy, sell, close, close_long, "
            "close_short, reverse, add or cancel (or enter_long, exit_long, …)."
        )
    if "symbol" not in known:
        raise SignalError(f'{where}: \'symbol\' is missing (e.g. "symbol": "{{{{ticker}}}}").')
    cmd = Command(line=line, action=action, symbol="", extras=extras)
    cmd.symbol = normalise_symbol(_text("symbol", known["symbol"], where), instruments)
    _sizing(cmd, known, where)
    _order(cmd, known, where)
    _timing(cmd, known, where)
    for name in ("id", "comment"):
        if name in known:
            setattr(cmd, "tag" if name == "id" else name, _text(name, known[name], where)[:200])
    return cmd


def _sizing(cmd: Command, known: dict[str, Any], where: str) -> None:
    if "qty" in known:
        cmd.qty = _decimal("qty", known["qty"], where)
    if "qty_type" in known:
        kind = _text("qty_type", known["qty_type"], where).lower()
        if kind not in QTY_TYPES:
            raise SignalError(f"{where}: qty_type must be one of {', '.join(sorted(QTY_TYPES))}.")
        cmd.qty_type = QTY_TYPES[kind]
    if "position" in known:
        position = _text("position", known["position"], where).lower()
        if position not in POSITIONS:
            raise SignalError(f"{where}: position must be long, short or flat, got {position!r}.")
        cmd.position = POSITIONS[position]
    if "position_size" in known:
        cmd.position_size = _decimal("position_size", known["position_size"], where, positive=False)
    if cmd.qty_type.startswith("percent") and cmd.qty is not None and cmd.qty > 100:
        raise SignalError(f"{where}: a percentage above 100 ({cmd.qty}%).")


def _order(cmd: Command, known: dict[str, Any], where: str) -> None:
    if "order_type" in known:
        order_type = _text("order_type", known["order_type"], where).lower()
        if order_type not in ("market", "limit"):
            raise SignalError(f"{where}: order_type must be market or limit.")
        cmd.order_type = order_type
    if "price" in known:
        cmd.price = _decimal("price", known["price"], where)
    if cmd.order_type == "limit" and cmd.price is None:
        raise SignalError(f'{where}: a limit order needs a price ("price" or `@<price>`).')
    if "leverage" in known:
        text = _text("leverage", known["leverage"], where).lower().strip("x")
        if not DIGITS.fullmatch(text) or not 1 <= int(text) <= 125:
            raise SignalError(f"{where}: leverage must be a whole number from 1 to 125.")
        cmd.leverage = int(text)
    if "margin_mode" in known and _text("margin_mode", known["margin_mode"], where).lower() not in (
        "cross",
        "crossed",
    ):
        raise NotExecutable(
            f"{where}: only cross margin is simulated; remove margin_mode or set it to cross.",
            code="unsupported_margin_mode",
        )
    if "sl" in known:
        cmd.sl = _decimal("sl", known["sl"], where)
    if "tp" in known:
        raw = known["tp"]
        items = raw if isinstance(raw, list) else str(raw).split(",")
        if not items or len(items) > MAX_TP:
            raise SignalError(f"{where}: tp takes 1 to {MAX_TP} prices.")
        cmd.tp = [_decimal("tp", item, where) for item in items]


def _timing(cmd: Command, known: dict[str, Any], where: str) -> None:
    if "time" in known:
        cmd.time_ms = _time_ms(known["time"], where)
    if "max_lag" in known:
        lag = _decimal("max_lag", known["max_lag"], where)
        if lag != lag.to_integral_value() or lag > MAX_LAG_LIMIT_S:
            raise SignalError(f"{where}: max_lag is whole seconds from 1 to {MAX_LAG_LIMIT_S}.")
        cmd.max_lag_s = int(lag)
    if "idempotency_key" in known:
        key = _text("idempotency_key", known["idempotency_key"], where)
        if not key or len(key) > 200:
            raise SignalError(f"{where}: idempotency_key must be 1 to 200 characters.")
        cmd.idempotency_key = key
