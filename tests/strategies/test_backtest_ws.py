"""Backtest progress over the WebSocket: the owner's `backtests` channel, a real client over
loopback, alongside polling."""

from typing import Any

from fastapi import FastAPI

from papertrade.kit.time import now_ms
from tests.conftest import User
from tests.strategies.test_api import PYTHON_CROSS, create, wait_backtest
from tests.ws.helpers import Socket, socket


def about(backtest_id: int) -> Any:
    def match(message: dict[str, Any]) -> bool:
        return (
            message.get("type") == "backtest.progress"
            and message["data"]["backtest_id"] == backtest_id
        )

    return match


async def until_finished(ws: Socket, backtest_id: int) -> list[dict[str, Any]]:
    """Every progress message of the backtest up to its last (done or failed)."""
    seen = []
    while True:
        message = await ws.wait_for(about(backtest_id), within=120)
        assert message["channel"] == "backtests"
        seen.append(message["data"])
        if message["data"]["status"] in ("done", "failed"):
            return seen


async def test_the_owner_follows_a_backtest_on_the_socket(
    user: User, user_factory: Any, app: FastAPI, live_url: str
) -> None:
    other: User = await user_factory()
    async with (
        socket(live_url, await user.api_key("read")) as ws,
        socket(live_url, await other.api_key("read")) as stranger,
    ):
        reply = await ws.subscribe("backtests")
        user_id = ws.seen[0]["user_id"]
        assert reply["type"] == "subscribed" and reply["channels"] == [f"backtests:{user_id}"]
        assert (await stranger.subscribe("backtests"))["type"] == "subscribed"
        strategy = await create(user)
        end = now_ms() // 60_000 * 60_000
        # three days of 1m candles not cached yet: fetched in pages, each page reported
        request = {"start": end - 3 * 86_400_000, "end": end}
        started = await user.post(f"/v1/strategies/{strategy['id']}/backtests", json=request)
        assert started.status_code == 202, started.text
        queued = started.json()
        updates = await until_finished(ws, queued["id"])
        # the stranger's socket is flushed up to here: nothing of someone else's backtest
        await stranger.send(op="ping", id="p")
        await stranger.wait_type("pong")
        assert not [m for m in stranger.seen if m.get("type") == "backtest.progress"]
    assert updates[0]["status"] == "running" and updates[0]["progress"] == 0
    assert updates[-1]["status"] == "done" and updates[-1]["progress"] == 1
    middle = [u for u in updates if u["status"] == "running" and 0 < u["progress"] < 1]
    assert middle and any("simulating" in u["progress_text"] for u in middle), updates
    progress = [u["progress"] for u in updates]
    assert progress == sorted(progress)
    assert {u["job_id"] for u in updates} == {queued["job_id"]}
    assert {u["strategy_id"] for u in updates} == {strategy["id"]}
    # and polling agrees
    polled = await wait_backtest(user, strategy["id"], queued["id"])
    assert polled["status"] == "done" and polled["progress"] == 1.0


async def test_a_failed_backtest_says_why_on_the_socket(user: User, live_url: str) -> None:
    broken = PYTHON_CROSS.replace("ctx.buy(size=0.5)", "raise ValueError('my bug')")
    strategy = await create(user, kind="python", source=broken)
    async with socket(live_url, await user.api_key("read")) as ws:
        assert (await ws.subscribe("backtests"))["type"] == "subscribed"
        end = now_ms() // 60_000 * 60_000
        started = await user.post(
            f"/v1/strategies/{strategy['id']}/backtests",
            json={"start": end - 86_400_000, "end": end},
        )
        updates = await until_finished(ws, started.json()["id"])
        await ws.send(op="unsubscribe", channels=["backtests"], id=9)
        reply = await ws.wait_for(lambda m: m.get("id") == 9)
    assert reply["type"] == "unsubscribed" and reply["channels"][0].startswith("backtests:")
    assert updates[-1]["status"] == "failed" and "ValueError: my bug" in updates[-1]["error"]


async def test_backtests_channel_takes_no_suffix(user: User, live_url: str) -> None:
    async with socket(live_url, await user.api_key("read")) as ws:
        reply = await ws.subscribe("backtests:1")
    assert reply["type"] == "error" and reply["error"] == "unknown_channel"
