"""Idempotency-Key on /v1 writes (foundation point 9)."""

import asyncio
from typing import Any

from fastapi import FastAPI

from papertrade.config import Settings
from tests.conftest import User, bearer, client_for, running_app


async def _count(user: User) -> int:
    return len((await user.get("/v1/portfolios/my")).json())


async def test_same_key_same_request_replays_without_redoing(user: User) -> None:
    headers = {"Idempotency-Key": "create-1"}
    first = await user.post("/v1/portfolios", json={"name": "once"}, headers=headers)
    second = await user.post("/v1/portfolios", json={"name": "once"}, headers=headers)
    assert first.status_code == second.status_code == 201
    assert first.json() == second.json()
    assert second.headers["idempotent-replayed"] == "true"
    assert await _count(user) == 1


async def test_same_key_different_request_is_refused(user: User) -> None:
    headers = {"Idempotency-Key": "create-2"}
    await user.post("/v1/portfolios", json={"name": "a"}, headers=headers)
    other = await user.post("/v1/portfolios", json={"name": "b"}, headers=headers)
    assert other.status_code == 422
    assert other.json()["error"] == "idempotency_key_reused"
    assert await _count(user) == 1


async def test_keys_are_scoped_to_the_credential(user: User, user_factory: Any) -> None:
    other: User = await user_factory()
    headers = {"Idempotency-Key": "shared-name"}
    a = await user.post("/v1/portfolios", json={"name": "x"}, headers=headers)
    b = await other.post("/v1/portfolios", json={"name": "x"}, headers=headers)
    assert a.status_code == b.status_code == 201
    assert a.json()["id"] != b.json()["id"]


async def test_replayed_errors_too(user: User) -> None:
    headers = {"Idempotency-Key": "bad-body"}
    first = await user.post("/v1/portfolios", json={"name": ""}, headers=headers)
    second = await user.post("/v1/portfolios", json={"name": ""}, headers=headers)
    assert first.status_code == second.status_code == 422
    assert second.headers.get("idempotent-replayed") == "true"


async def test_concurrent_duplicates_create_exactly_one(user: User, app: FastAPI) -> None:
    key = await user.api_key("write")
    async with client_for(app) as client:
        responses = await asyncio.gather(
            *(
                client.post(
                    "/v1/portfolios",
                    json={"name": "race"},
                    headers={**bearer(key), "Idempotency-Key": "race-1"},
                )
                for _ in range(8)
            )
        )
    statuses = sorted(r.status_code for r in responses)
    assert statuses.count(201) >= 1
    assert set(statuses) <= {201, 409}
    ids = {r.json()["id"] for r in responses if r.status_code == 201}
    assert len(ids) == 1
    assert [p["name"] for p in (await user.get("/v1/portfolios/my")).json()].count("race") == 1
    for response in responses:
        if response.status_code == 409:
            assert response.json()["error"] == "idempotency_in_progress"


async def test_stored_responses_survive_a_restart(settings: Settings) -> None:
    from tests.conftest import sign_up

    async with running_app(settings) as first_app:
        user = await sign_up(first_app)
        key = await user.api_key("write")
        headers = {**bearer(key), "Idempotency-Key": "restart-1"}
        async with client_for(first_app) as client:
            first = await client.post("/v1/portfolios", json={"name": "r"}, headers=headers)
    async with running_app(settings) as second_app, client_for(second_app) as client:
        again = await client.post("/v1/portfolios", json={"name": "r"}, headers=headers)
        mine = await client.get("/v1/portfolios/my", headers=bearer(key))
    assert again.json() == first.json()
    assert len(mine.json()) == 1
    await user.client.aclose()


async def test_the_same_request_spelled_differently_is_replayed(user: User) -> None:
    headers = {"Idempotency-Key": "respelled", "Content-Type": "application/json"}
    first = await user.post(
        "/v1/portfolios", content=b'{"name":"same","initial_balance":5000}', headers=headers
    )
    respelled = await user.post(
        "/v1/portfolios",
        content=b'{ "initial_balance" : 5000.00 ,\n "name" : "same" }',
        headers=headers,
    )
    legacy = await user.post(
        "/api/portfolios", json={"name": "same", "initial_balance": 5000}, headers=headers
    )
    assert first.status_code == 201
    for again in (respelled, legacy):
        assert again.status_code == 201 and again.json() == first.json(), again.text
        assert again.headers["idempotent-replayed"] == "true"
    assert await _count(user) == 1
    changed = await user.post(
        "/v1/portfolios", json={"name": "same", "initial_balance": 5000.5}, headers=headers
    )
    assert changed.json()["error"] == "idempotency_key_reused"
