"""Notification kinds of the areas around trading: copy trading, subscriptions, comments, the
wallet, feedback and strategies. Their durable events name the users to tell (a settlement
tells both sides), so each kind says who hears of which event (kinds.Recipients)."""

from collections.abc import Iterable
from decimal import Decimal
from typing import Any

from papertrade.kit.decimals import money_text, plain
from papertrade.notifications.kinds import Channels, Kind, Message, users
from papertrade.outbox.store import StoredEvent


def _money(value: Any) -> str:
    return money_text(Decimal(str(value)))


def _copy_skipped(event: StoredEvent) -> Message:
    data = event.data
    body = f"A {data['symbol']} trade of the leader was not copied: {data['reason']}."
    if data.get("detail"):
        body += f" {data['detail']}"
    keep = {k: data.get(k) for k in ("relation_id", "leader_order_id", "symbol", "reason")}
    return Message(f"Copy skipped: {data['symbol']}", body, keep)


def _copy_ended(event: StoredEvent) -> Message:
    data = event.data
    body = f"Copy relation #{data['relation_id']} ended ({data['reason']})."
    return Message("Copy trading ended", body, {"relation_id": data["relation_id"]})


def _copy_settled(event: StoredEvent) -> Message:
    data = event.data
    body = (
        f"Relation #{data['relation_id']} ({data['reason']}): net PnL {_money(data['net_pnl'])}"
        f" USDT, high-water mark {_money(data['hwm_before'])} → {_money(data['hwm_after'])},"
        f" {plain(Decimal(str(data['pct'])))} % share: fee {_money(data['fee'])} USDT."
    )
    keep = {k: data.get(k) for k in ("settlement_id", "relation_id", "fee")}
    return Message("Revenue share settled", body, keep)


def _subscription_signal(event: StoredEvent) -> Message:
    data = event.data
    side = str(data.get("side", ""))
    what = "closed" if side == "close" else f"opened {side}"
    body = (
        f"{data.get('portfolio_name') or 'A portfolio you follow'} {what} "
        f"{plain(Decimal(str(data['quantity'])))} {data['symbol']} at "
        f"{plain(Decimal(str(data['price'])))}."
    )
    keep = {k: data.get(k) for k in ("subscription_id", "signal_id", "symbol", "side")}
    channels = frozenset(str(c) for c in data.get("channels") or ())
    return Message(f"Signal: {data['symbol']} {side}", body, keep, channels=channels)


def _subscription_changed(event: StoredEvent) -> Message:
    data = event.data
    body = f"Your subscription #{data['subscription_id']} is {data['status']} ({data['what']})."
    keep = {k: data.get(k) for k in ("subscription_id", "status", "what")}
    return Message(f"Subscription {data['what'].replace('_', ' ')}", body, keep)


def _comment(event: StoredEvent) -> Message:
    data = event.data
    title = "New comment" if data.get("parent_author_user_id") is None else "New reply"
    body = f"Comment #{data['comment_id']} on portfolio #{data['portfolio_id']}."
    return Message(title, body, {"comment_id": data["comment_id"]})


def _comment_readers(event: StoredEvent) -> Iterable[int]:
    """The portfolio's owner and the author replied to; never the comment's own author."""
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
    body = f"Deployment #{data.get('deployment_id')} was paused: {data.get('reason')}"
    keep = {k: data.get(k) for k in ("strategy_id", "deployment_id")}
    return Message("Strategy paused", body, keep)


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
    Channels(inbox=True, telegram=True, email=False),
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

AREA_KINDS = (COPY, SUBSCRIPTION, COMMENT, WALLET, FEEDBACK, STRATEGY)
