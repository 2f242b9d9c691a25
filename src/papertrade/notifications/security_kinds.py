"""The `security` kind: what was done with the account's credentials (an API key made or
revoked, a sign-in from a new device). Someone who got in would rather the owner did not hear of
it, so it always reaches the inbox (Kind.always) and goes by email too unless turned off there."""

from papertrade.kit.time import from_ms
from papertrade.notifications.kinds import Channels, Kind, Message, users
from papertrade.outbox.store import StoredEvent

_NOT_YOU = "If this was not you, change your password: that signs out every other session."


def _when(ms: int) -> str:
    return from_ms(ms).strftime("%Y-%m-%d %H:%M UTC")


def _key(event: StoredEvent, verb: str) -> Message:
    data = event.data
    note = f" ({data['note']})" if data.get("note") else ""
    body = (
        f"API key {data['prefix']}…{note} with {data['scope']} scope was {verb} on "
        f"{_when(event.time)}. {_NOT_YOU}"
    )
    keep = {k: data.get(k) for k in ("key_id", "prefix", "scope")}
    return Message(f"API key {verb}", body, keep)


def _key_created(event: StoredEvent) -> Message:
    return _key(event, "created")


def _key_revoked(event: StoredEvent) -> Message:
    return _key(event, "revoked")


def _new_device(event: StoredEvent) -> Message:
    device = str(event.data.get("device"))
    body = (
        f"Your account was signed in from {device}, a device it was not signed in from "
        f"before, on {_when(event.time)}. {_NOT_YOU}"
    )
    return Message(f"New sign-in: {device}", body, {"device": device, "at": event.time})


SECURITY = Kind(
    "security",
    "An API key was created or revoked, or your account was signed in from a new device. "
    "Always in the inbox.",
    Channels(inbox=True, telegram=False, email=True),
    {
        "api_key.created": _key_created,
        "api_key.revoked": _key_revoked,
        "user.new_device": _new_device,
    },
    {
        "api_key.created": users("user_id"),
        "api_key.revoked": users("user_id"),
        "user.new_device": users("user_id"),
    },
    always=frozenset({"inbox"}),
)
