"""The domain's order, position, balance and conditional events as Binance user-data events.

Input is the WebSocket fan-out's batches (ws/portfolio.py `Wire`: one batch per commit, in the
same order in every process), so the mapping runs in each process that holds a user socket. One
batch becomes, per portfolio: its ORDER_TRADE_UPDATEs (with a TRADE_LITE beside each fill) and
ALGO_UPDATEs in commit order, except that a triggered conditional's ALGO_UPDATE goes before the
updates of the order it placed (as on Binance: the trigger, then its order), then one
ACCOUNT_UPDATE for its position and balance changes.
"""

from collections import OrderedDict
from decimal import Decimal
from typing import Any

from papertrade.kit.time import now_ms

Wire = tuple[str, int, str, int, dict[str, Any]]
EXECUTION = {
    "order.new": "NEW",
    "order.partially_filled": "TRADE",
    "order.filled": "TRADE",
    "order.canceled": "CANCELED",
    "order.expired": "EXPIRED",
}
ORDER_STATUS = {
    "new": "NEW",
    "partially_filled": "PARTIALLY_FILLED",
    "filled": "FILLED",
    "canceled": "CANCELED",
    "expired": "EXPIRED",
    "rejected": "REJECTED",
}
ALGO_STATUS = {
    "conditional.new": "NEW",
    "conditional.canceled": "CANCELED",
    "conditional.triggered": "TRIGGERED",
    "conditional.rejected": "REJECTED",
}
MEMORY = 50_000  # orders whose last fill state is remembered (for l, L, n of the next fill)


def num(value: object) -> str:
    """A JSON number of the native wire as Binance's decimal string."""
    if value is None:
        return "0"
    if isinstance(value, float):
        value = Decimal(repr(value))
    text = format(Decimal(str(value)), "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def _dec(value: object) -> Decimal:
    return Decimal(repr(value)) if isinstance(value, float) else Decimal(str(value or 0))


class UserEvents:
    """Turns fan-out batches into Binance user-data events; remembers fills to tell l, L, n."""

    def __init__(self) -> None:
        # order id → (filled qty, filled quote, commission, rested as NEW without a fill)
        self._orders: OrderedDict[int, tuple[Decimal, Decimal, Decimal, bool]] = OrderedDict()
        self._balances: dict[int, Decimal] = {}
        self._last_e = 0

    def _stamp(self, time: int) -> int:
        """Event times strictly increasing in this process (Binance orders by E across types)."""
        stamp = max(time, now_ms(), self._last_e + 1)
        self._last_e = stamp
        return stamp

    def batch(self, wires: list[Wire]) -> dict[int, list[dict[str, Any]]]:
        """portfolio id → the Binance events of this commit, in order."""
        out: dict[int, list[dict[str, Any]]] = {}
        account: dict[int, tuple[list[dict[str, Any]], dict[str, Any] | None, bool]] = {}
        for _channel, portfolio_id, kind, time, data in wires:
            events = out.setdefault(portfolio_id, [])
            positions, balance, traded = account.get(portfolio_id, ([], None, False))
            if kind in EXECUTION:
                events.extend(self._order(kind, time, data))
                traded = traded or EXECUTION[kind] == "TRADE"
            elif kind in ALGO_STATUS:
                _before_its_order(events, self._algo(kind, time, data))
            elif kind.startswith("position."):
                positions = [p for p in positions if _position_key(p) != _position_key(data)]
                positions.append(data | {"_liquidated": kind == "position.liquidated"})
            elif kind == "balance.changed":
                balance = data
            account[portfolio_id] = (positions, balance, traded)
        for portfolio_id, (positions, balance, traded) in account.items():
            if positions or balance is not None:
                out[portfolio_id].append(self._account(portfolio_id, positions, balance, traded))
        return {pid: events for pid, events in out.items() if events}

    def _order(self, kind: str, time: int, o: dict[str, Any]) -> list[dict[str, Any]]:
        order_id = int(o["id"])
        filled = _dec(o.get("filled_quantity"))
        avg = _dec(o.get("avg_price"))
        quote = filled * avg
        commission = _dec(o.get("commission"))
        execution = EXECUTION[kind]
        before = self._orders.get(order_id)
        fill = o.get("fill")
        trade_id, realized = 0, "0"
        if execution == "TRADE" and isinstance(fill, dict):
            trade_id = int(fill.get("id") or 0)
            realized = num(fill.get("realized_pnl"))
        if execution == "NEW":
            # The first word on an order: as Binance, NEW carries no fill yet.
            self._remember(order_id, (Decimal(0), Decimal(0), Decimal(0), filled.is_zero()))
            filled_now, quote_now, fee_now, status = Decimal(0), Decimal(0), Decimal(0), "NEW"
            last_qty = last_price = fee = Decimal(0)
            rested = filled.is_zero()
        else:
            prev_filled, prev_quote, prev_fee, rested = before or (
                Decimal(0),
                Decimal(0),
                Decimal(0),
                False,
            )
            last_qty = filled - prev_filled
            last_price = (quote - prev_quote) / last_qty if last_qty > 0 else Decimal(0)
            fee = commission - prev_fee
            if execution == "TRADE" and isinstance(fill, dict):
                # The execution itself (orders/events.py): exact even for an order this
                # process did not see from its start.
                last_qty, last_price = _dec(fill.get("quantity")), _dec(fill.get("price"))
                fee = _dec(fill.get("commission"))
            filled_now, quote_now, fee_now = filled, quote, commission
            status = ORDER_STATUS.get(str(o.get("status")), str(o.get("status")).upper())
            if execution == "TRADE" and last_qty <= 0:
                return []  # nothing new was filled (a repeated state)
            self._remember(order_id, (filled, quote, commission, rested))
            if status in ("FILLED", "CANCELED", "EXPIRED", "REJECTED"):
                self._orders.pop(order_id, None)
        order_type = str(o.get("type") or "market").upper()
        side = str(o.get("side") or "").upper()
        stamp = self._stamp(time)
        trade_time = int(o.get("updated_at") or time)
        maker = execution == "TRADE" and order_type == "LIMIT" and rested
        position_side = str(o.get("position_side") or "BOTH")
        body = {
            "s": o["symbol"],
            "c": o.get("client_order_id") or "",
            "S": side,
            "o": order_type,
            "f": "GTC",
            "q": num(o.get("quantity")),
            "p": num(o.get("price")),
            "ap": num(avg if not filled_now.is_zero() else 0),
            "sp": "0",
            "x": execution,
            "X": status,
            "i": order_id,
            "l": num(last_qty),
            "z": num(filled_now),
            "L": num(last_price.quantize(Decimal("1e-8")).normalize() if last_qty else 0),
            "N": "USDT",
            "n": num(fee if execution == "TRADE" else 0),
            "T": trade_time,
            "t": trade_id,
            "b": "0",
            "a": "0",
            "m": maker,
            "R": o.get("action") == "close" and position_side == "BOTH",
            "wt": "CONTRACT_PRICE",
            "ot": order_type,
            "ps": position_side,
            "cp": False,
            "rp": realized,
            "pP": False,
            "si": 0,
            "ss": 0,
            "V": "EXPIRE_MAKER",
            "pm": "NONE",
            "gtd": 0,
        }
        del quote_now, fee_now
        events = [{"e": "ORDER_TRADE_UPDATE", "E": stamp, "T": trade_time, "o": body}]
        if execution == "TRADE":
            events.append(
                {
                    "e": "TRADE_LITE",
                    "E": self._stamp(time),
                    "T": trade_time,
                    "s": o["symbol"],
                    "q": body["l"],
                    "p": num(o.get("price")),
                    "m": maker,
                    "c": body["c"],
                    "S": side,
                    "L": body["L"],
                    "l": body["l"],
                    "t": trade_id,
                    "i": order_id,
                }
            )
        return events

    def _remember(self, order_id: int, state: tuple[Decimal, Decimal, Decimal, bool]) -> None:
        self._orders[order_id] = state
        self._orders.move_to_end(order_id)
        while len(self._orders) > MEMORY:
            self._orders.popitem(last=False)

    def _algo(self, kind: str, time: int, c: dict[str, Any]) -> dict[str, Any]:
        status = ALGO_STATUS[kind]
        body: dict[str, Any] = {
            "caid": c.get("client_algo_id") or "",
            "aid": int(c["id"]),
            "at": "CONDITIONAL",
            "o": str(c.get("type") or "").upper(),
            "s": c["symbol"],
            "S": str(c.get("side") or "").upper(),
            "ps": c.get("position_side") or "BOTH",
            "f": c.get("time_in_force") or "GTC",
            "q": num(c.get("quantity")),
            "X": status,
            "ai": str(c["actual_order_id"]) if c.get("actual_order_id") else "",
            "ap": "0",
            "aq": "0",
            "act": "0",
            "tp": num(c.get("trigger_price")),
            "p": num(c.get("price")),
            "V": "EXPIRE_MAKER",
            "wt": c.get("working_type") or "CONTRACT_PRICE",
            "pm": "NONE",
            "cp": bool(c.get("close_position")),
            "pP": bool(c.get("price_protect")),
            "R": bool(c.get("reduce_only")),
            "tt": int(c.get("triggered_at") or 0),
            "gtd": 0,
        }
        if c.get("reason"):
            body["rm"] = str(c["reason"])
        updated = int(c.get("updated_at") or time)
        return {"e": "ALGO_UPDATE", "E": self._stamp(time), "T": updated, "o": body}

    def _account(
        self,
        portfolio_id: int,
        positions: list[dict[str, Any]],
        balance: dict[str, Any] | None,
        traded: bool,
    ) -> dict[str, Any]:
        rows = []
        for p in positions:
            rows.append(
                {
                    "s": p["symbol"],
                    "pa": num(p.get("quantity")),
                    "ep": num(p.get("entry_price")),
                    "bep": num(p.get("entry_price")),
                    "cr": "0",
                    "up": num(p.get("unrealized_pnl")),
                    "mt": "isolated" if p.get("margin_type") == "isolated" else "cross",
                    "iw": num(p.get("isolated_margin")),
                    "ps": p.get("position_side") or "BOTH",
                }
            )
        balances = []
        if balance is not None:
            wallet = _dec(balance.get("balance"))
            before = self._balances.get(portfolio_id)
            self._balances[portfolio_id] = wallet
            change = "0" if traded or before is None else num(wallet - before)
            balances.append({"a": "USDT", "wb": num(wallet), "cw": num(wallet), "bc": change})
        reason = "ORDER" if traded or positions else "ADJUSTMENT"
        if any(p.get("_liquidated") for p in positions):
            reason = "ORDER"
        now = self._stamp(0)
        return {
            "e": "ACCOUNT_UPDATE",
            "E": now,
            "T": now,
            "a": {"m": reason, "B": balances, "P": rows},
        }


def _before_its_order(events: list[dict[str, Any]], algo: dict[str, Any]) -> None:
    """Add an ALGO_UPDATE to a commit's events before the first update of the order it placed
    (the commit lists a trigger's order before the trigger itself), else at the end. `E` stays
    strictly increasing: the moved events take the same stamps in their new order."""
    placed = algo["o"]["ai"]
    at = next(
        (
            n
            for n, event in enumerate(events)
            if placed and event["e"] == "ORDER_TRADE_UPDATE" and str(event["o"]["i"]) == placed
        ),
        None,
    )
    if at is None:
        events.append(algo)
        return
    stamps = sorted([event["E"] for event in events[at:]] + [algo["E"]])
    events.insert(at, algo)
    for event, stamp in zip(events[at:], stamps, strict=True):
        event["E"] = stamp


def _position_key(p: dict[str, Any]) -> tuple[str, str]:
    return (str(p.get("symbol")), str(p.get("position_side") or "BOTH"))


def config_update(symbol: str, leverage: int) -> dict[str, Any]:
    now = now_ms()
    return {"e": "ACCOUNT_CONFIG_UPDATE", "E": now, "T": now, "ac": {"s": symbol, "l": leverage}}


def expired(key: str) -> dict[str, Any]:
    return {"e": "listenKeyExpired", "E": now_ms(), "listenKey": key}
