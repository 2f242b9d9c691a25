"""Notification kinds of the areas around trading: copy trading, subscriptions, comments, the
wallet, feedback and strategies. Their durable events name the users to tell (a settlement
tells both sides), so each kind says who hears of which event (kinds.Recipients)."""

from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import Any

from papertrade.models.portfolio import code_of as portfolio_code
from papertrade.models.strategy import code_of as strategy_code
from papertrade.notifications.kinds import Channels, Kind, Message, page_of, users
from papertrade.notifications.numbers import percent, price, quantity, signed_usdt, usdt
from papertrade.outbox.store import StoredEvent
from papertrade.tg.text import close_notice, cornix_block


def _money(value: Any) -> str:
    return usdt(value)


def _copy_of(data: Mapping[str, Any]) -> str:
    """A copy by what it copies ("your copy of P0000012"); events stored before they named the
    leader's portfolio say "copy #<relation>"."""
    leader = data.get("leader_portfolio_id")
    if leader is None:
        return f"copy #{data['relation_id']}"
    return f"copy of {portfolio_code(int(leader))}"


def _copy_page(data: Mapping[str, Any]) -> str | None:
    return page_of(portfolio_id=data.get("leader_portfolio_id"))


def _copy_skipped(event: StoredEvent) -> Message:
    data = event.data
    leader = data.get("leader_portfolio_id")
    whose = f"of {portfolio_code(int(leader))}" if leader is not None else "of the leader"
    body = f"A {data['symbol']} trade {whose} was not copied: {data['reason']}."
    if data.get("detail"):
        body += f" {data['detail']}"
    keep = {k: data.get(k) for k in ("relation_id", "leader_order_id", "symbol", "reason")}
    return Message(f"Copy skipped: {data['symbol']}", body, keep, link=_copy_page(data))


def _copy_ended(event: StoredEvent) -> Message:
    data = event.data
    body = f"The {_copy_of(data)} ended ({data['reason']})."
    keep = {"relation_id": data["relation_id"]}
    return Message("Copy trading ended", body, keep, link=_copy_page(data))


def _copy_settled(event: StoredEvent) -> Message:
    data = event.data
    body = (
        f"The {_copy_of(data)} ({data['reason']}): net PnL {signed_usdt(data['net_pnl'])}"
        f" USDT, high-water mark {_money(data['hwm_before'])} → {_money(data['hwm_after'])},"
        f" {Decimal(str(data['pct'])).normalize():f} % share: fee {_money(data['fee'])} USDT."
    )
    keep = {k: data.get(k) for k in ("settlement_id", "relation_id", "fee")}
    return Message("Revenue share settled", body, keep, link=_copy_page(data))


def _subscription_signal(event: StoredEvent) -> Message:
    data = event.data
    side = str(data.get("side", ""))
    kind = str(data.get("event") or ("close" if side == "close" else "open"))
    who = data.get("portfolio_name") or "A portfolio you follow"
    if kind in PROTECTION:
        trigger = data.get("trigger_price")
        at = f" at {price(data['symbol'], trigger)}" if trigger is not None else ""
        what = PROTECTION[kind].format(change=data.get("change", "changed"))
        body = f"{who}: {what} on {data['symbol']} ({data.get('conditional_type')}{at})."
        title = f"Signal: {data['symbol']} {kind.replace('_', ' ')}"
    else:
        what = "closed" if side == "close" else f"opened {side}"
        body = (
            f"{who} {what} {quantity(data['quantity'])} {data['symbol']} at "
            f"{price(data['symbol'], data['price'])}{_trade_outcome(data)}."
        )
        title = f"Signal: {data['symbol']} {side}"
    keep = {k: data.get(k) for k in ("subscription_id", "signal_id", "symbol", "side", "event")}
    channels = frozenset(str(c) for c in data.get("channels") or ())
    page = page_of(portfolio_id=data.get("portfolio_id"), strategy_id=data.get("strategy_id"))
    return Message(title, body, keep, _subscription_telegram(data, kind), channels, link=page)


def _decimals(values: Iterable[Any]) -> list[Decimal]:
    return [Decimal(str(v)) for v in values if v is not None]


def _trade_outcome(data: Mapping[str, Any]) -> str:
    """The prose after an open (its take-profits and stop-loss) or a close (its PnL)."""
    if data.get("realized_pnl") is not None:
        pnl, pct = data["realized_pnl"], data.get("pnl_pct") or 0
        return f", PnL {signed_usdt(pnl)} USDT ({percent(pct)} %)"
    parts = []
    if tps := _decimals(data.get("tp") or ()):
        parts.append(f"take-profit {', '.join(price(data.get('symbol'), p) for p in tps)}")
    if data.get("sl") is not None:
        parts.append(f"stop-loss {price(data.get('symbol'), data['sl'])}")
    return f" ({'; '.join(parts)})" if parts else ""


def _subscription_telegram(data: Mapping[str, Any], kind: str) -> str | None:
    """An open as a Cornix block, a close as the close notice (domain rules B2.7); None (the
    plain title and body) for take-profit / stop-loss signals."""
    if kind not in ("open", "close") or data.get("price") is None:
        return None
    footer = f"{data.get('portfolio_name') or 'A portfolio you follow'} (subscription)"
    symbol, price = str(data["symbol"]), Decimal(str(data["price"]))
    if kind == "open":
        leverage = data.get("leverage")
        return cornix_block(
            symbol,
            "buy" if data.get("side") == "long" else "sell",
            leverage=int(leverage) if leverage is not None else None,
            margin_type=str(data.get("margin_type") or "cross"),
            entries=[price],
            take_profits=_decimals(data.get("tp") or ()),
            stops=_decimals([data.get("sl")]),
            footer=footer,
        )
    if data.get("realized_pnl") is not None:
        pnl, pct = Decimal(str(data["realized_pnl"])), Decimal(str(data.get("pnl_pct") or 0))
        return close_notice(symbol, price, pnl, pct, footer)
    return None


# How a take-profit / stop-loss signal reads (subscriptions/consumers.py makes them).
PROTECTION = {
    "modify": "take-profit / stop-loss {change}",
    "tp_hit": "take-profit hit",
    "sl_hit": "stop-loss hit",
}


def _subscription_changed(event: StoredEvent) -> Message:
    data = event.data
    body = f"Your subscription #{data['subscription_id']} is {data['status']} ({data['what']})."
    keep = {k: data.get(k) for k in ("subscription_id", "status", "what")}
    return Message(f"Subscription {data['what'].replace('_', ' ')}", body, keep)


def _comment(event: StoredEvent) -> Message:
    data = event.data
    reply = data.get("parent_author_user_id") is not None
    title = "New reply" if reply else "New comment"
    # Events stored before they carried names say the code alone.
    who = data.get("author_name") or "Someone"
    if data.get("strategy_id") is not None:
        what, code = "strategy", strategy_code(int(data["strategy_id"]))
    else:
        what, code = "portfolio", portfolio_code(int(data["portfolio_id"]))
    name = data.get("target_name")
    on = f"{what} {name} ({code})" if name else f"{what} {code}"
    verb = "replied to a comment on" if reply else "commented on"
    page = page_of(portfolio_id=data.get("portfolio_id"), strategy_id=data.get("strategy_id"))
    return Message(title, f"{who} {verb} {on}.", {"comment_id": data["comment_id"]}, link=page)


def _comment_readers(event: StoredEvent) -> Iterable[int]:
    """The owner of the portfolio or strategy and the author replied to; never the comment's
    own author."""
    author = event.data.get("author_user_id")
    named = users("owner_user_id", "parent_author_user_id")(event)
    return [user for user in named if user != author]


def _wallet_credited(event: StoredEvent) -> Message:
    data = event.data
    body = (
        f"{_money(data['amount'])} USDT credited to your wallet ({data['kind']}); "
        f"balance {_money(data['balance'])} USDT."
    )
    return Message("Wallet credited", body, {k: data.get(k) for k in ("kind", "amount")})


def _feedback_answered(event: StoredEvent) -> Message:
    data = event.data
    title = f"Your feedback #{data['feedback_id']} was answered"
    return Message(title, str(data["answer"]), {"feedback_id": data["feedback_id"]})


def _strategy_paused(event: StoredEvent) -> Message:
    data = event.data
    strategy = data.get("strategy_id")
    named = f" of strategy {strategy_code(int(strategy))}" if strategy is not None else ""
    body = f"Deployment #{data.get('deployment_id')}{named} was paused: {data.get('reason')}"
    keep = {k: data.get(k) for k in ("strategy_id", "deployment_id")}
    page = page_of(strategy_id=data.get("strategy_id"))
    return Message("Strategy paused", body, keep, link=page)


def _live_drift(event: StoredEvent) -> Message:
    data = event.data
    drift = data.get("drift") or {}
    parts = [
        f"{p['symbol']} {p['actual']} held, {p['intended']} intended"
        for p in drift.get("positions", [])
    ]
    if drift.get("open_orders"):
        parts.append(f"{len(drift['open_orders'])} open order(s) the mirror did not place")
    body = f"Live account {data.get('label')!r} differs from what was mirrored: " + "; ".join(parts)
    return Message("Live account drift", body + ".", {"live_account_id": data["live_account_id"]})


MODES = {
    "fixed_amount": "a fixed margin per order",
    "fixed_ratio": "a fixed ratio",
    "multiplier": "a multiple of your size",
}


def _copy_started(event: StoredEvent) -> Message:
    data = event.data
    code = portfolio_code(int(data["leader_portfolio_id"]))
    body = (
        f"{data['follower_name']} started copying {data['leader_portfolio_name']} ({code}) with "
        f"{_money(data['allocation'])} USDT ({MODES.get(data['mode'], data['mode'])})."
    )
    keep = {k: data.get(k) for k in ("relation_id", "leader_portfolio_id")}
    page = page_of(portfolio_id=data["leader_portfolio_id"])
    return Message(f"New copier of {code}", body, keep, link=page)


def _new_subscriber(event: StoredEvent) -> Message:
    data = event.data
    if data.get("strategy_id") is not None:
        what, code = "strategy", strategy_code(int(data["strategy_id"]))
        verb = "follows the signals of"
    else:
        what, code = "portfolio", portfolio_code(int(data["portfolio_id"]))
        verb = "subscribed (paid) to" if data.get("tier") == "paid" else "subscribed to"
    body = f"{data['subscriber_name']} {verb} your {what} {data['name']} ({code})."
    keep = {k: data.get(k) for k in ("subscription_id", "portfolio_id", "strategy_id", "tier")}
    page = page_of(portfolio_id=data.get("portfolio_id"), strategy_id=data.get("strategy_id"))
    return Message(f"New subscriber of {code}", body, keep, link=page)


COPY = Kind(
    "copy",
    "Copy trading: a leader's trade not copied (and why), a relation ended, a revenue-share "
    "settlement (both sides).",
    Channels(inbox=True, telegram=True, email=False),
    {"copy.skipped": _copy_skipped, "copy.ended": _copy_ended, "copy.settled": _copy_settled},
    {
        "copy.skipped": users("user_id"),
        "copy.ended": users("user_id", "leader_user_id"),
        "copy.settled": users("follower_user_id", "leader_user_id"),
    },
)
SUBSCRIPTION = Kind(
    "subscription",
    "A trade of a portfolio you subscribe to (on the channels of the subscription), and changes "
    "to your subscriptions (renewed, past due, ended).",
    # Email on by default: a signal is mailed only when its subscription names email (the
    # subscriber's own choice there), and this kind's switch (or a mail's unsubscribe link)
    # turns it off again.
    Channels(inbox=True, telegram=True, email=True),
    {"subscription.signal": _subscription_signal, "subscription.changed": _subscription_changed},
    {"subscription.signal": users("user_id"), "subscription.changed": users("user_id")},
)
COMMENT = Kind(
    "comment",
    "A comment on your portfolio, or a reply to your comment.",
    Channels(inbox=True, telegram=False, email=False),
    {"comment.posted": _comment},
    {"comment.posted": _comment_readers},
)
WALLET = Kind(
    "wallet",
    "USDT credited to your wallet (a recharge paid, an operator's credit).",
    Channels(inbox=True, telegram=True, email=True),
    {"wallet.credited": _wallet_credited},
    {"wallet.credited": users("user_id")},
)
FEEDBACK = Kind(
    "feedback",
    "An answer to feedback you sent.",
    Channels(inbox=True, telegram=False, email=True),
    {"feedback.answered": _feedback_answered},
    {"feedback.answered": users("user_id")},
)
STRATEGY = Kind(
    "strategy",
    "A deployed strategy failed and was paused.",
    Channels(inbox=True, telegram=True, email=True),
    {"signal.strategy_paused": _strategy_paused},
)

LIVE = Kind(
    "live",
    "A live account's positions or open orders at the exchange differ from what was mirrored "
    "(reconciliation).",
    Channels(inbox=True, telegram=True, email=True),
    {"live.drift": _live_drift},
    {"live.drift": users("user_id")},
)

AUDIENCE = Kind(
    "audience",
    "Someone subscribed to, followed or started copying one of your portfolios or strategies.",
    Channels(inbox=True, telegram=False, email=False),
    {"copy.started": _copy_started, "subscription.new_subscriber": _new_subscriber},
    {
        "copy.started": users("leader_user_id"),
        "subscription.new_subscriber": users("owner_user_id"),
    },
)

AREA_KINDS = (COPY, SUBSCRIPTION, AUDIENCE, COMMENT, WALLET, FEEDBACK, STRATEGY, LIVE)
