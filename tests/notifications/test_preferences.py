"""Per-user channels per kind: defaults, partial changes, and the inbox honouring them."""

import asyncio

from fastapi import FastAPI

from tests.conftest import User
from tests.notifications.helpers import inbox, wait_for_inbox
from tests.trading_api.helpers import market, set_price


def _by_kind(body: dict[str, object]) -> dict[str, dict[str, object]]:
    rows = body["preferences"]
    assert isinstance(rows, list)
    return {row["kind"]: row for row in rows}


async def test_defaults_are_listed_for_every_kind(user: User) -> None:
    prefs = _by_kind((await user.get("/v1/inbox/preferences")).json())
    assert set(prefs) >= {"fill", "liquidation", "funding", "signal", "system"}
    fill = prefs["fill"]
    assert (fill["inbox"], fill["telegram"], fill["email"]) == (True, True, False)
    assert fill["defaults"] == {"inbox": True, "telegram": True, "email": False}
    assert prefs["liquidation"]["email"] is True


async def test_a_change_keeps_what_it_does_not_name(user: User) -> None:
    response = await user.client.put(
        "/v1/inbox/preferences",
        json={"preferences": {"fill": {"email": True}, "funding": {"inbox": False}}},
        headers=user.write_headers(),
    )
    assert response.status_code == 200, response.text
    prefs = _by_kind(response.json())
    assert (prefs["fill"]["inbox"], prefs["fill"]["telegram"], prefs["fill"]["email"]) == (
        True,
        True,
        True,
    )
    assert prefs["funding"]["inbox"] is False
    again = await user.client.put(
        "/v1/inbox/preferences",
        json={"preferences": {"fill": {"telegram": False}}},
        headers=user.write_headers(),
    )
    fill = _by_kind(again.json())["fill"]
    assert (fill["inbox"], fill["telegram"], fill["email"]) == (True, False, True)
    assert _by_kind((await user.get("/v1/inbox/preferences")).json())["fill"] == fill


async def test_bad_preferences_are_refused(user: User) -> None:
    bodies: list[dict[str, object]] = [
        {"preferences": {"gossip": {"inbox": True}}},
        {"preferences": {"fill": {"inbox": "yes"}}},
        {"preferences": {"fill": {"inbox": 1}}},
        {"preferences": {"fill": {"pigeon": True}}},
        {"prefs": {}},
    ]
    for body in bodies:
        response = await user.client.put(
            "/v1/inbox/preferences", json=body, headers=user.write_headers()
        )
        assert response.status_code == 422, body
        assert set(response.json()) == {"error", "msg"}
    unknown = await user.client.put(
        "/v1/inbox/preferences",
        json={"preferences": {"gossip": {"inbox": True}}},
        headers=user.write_headers(),
    )
    assert unknown.json()["error"] == "unknown_notification_kind"


async def test_a_kind_turned_off_in_the_inbox_does_not_arrive_there(
    user: User, app: FastAPI
) -> None:
    await user.client.put(
        "/v1/inbox/preferences",
        json={"preferences": {"fill": {"inbox": False}}},
        headers=user.write_headers(),
    )
    await set_price(app, "BTCUSDT", "50000")
    pid = (await user.portfolio())["id"]
    await market(user, pid, "BTCUSDT", "buy", "0.002")
    await asyncio.sleep(0.5)  # give the consumer the time it would take to deliver
    assert (await inbox(user))["notifications"] == []
    await user.client.put(
        "/v1/inbox/preferences",
        json={"preferences": {"fill": {"inbox": True}}},
        headers=user.write_headers(),
    )
    await market(user, pid, "BTCUSDT", "sell", "0.002")
    (note,) = await wait_for_inbox(user, 1)
    assert note["title"] == "BTCUSDT sell order filled"
