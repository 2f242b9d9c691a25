"""Sign-in and sign-up are throttled per account and per address, over real HTTP from several
client addresses, in one process and shared through Redis (issue 14 item 4)."""

from typing import Any

import httpx

from papertrade.config import Settings
from tests.conftest import unique_email
from tests.foundation.helpers import client_from, hold_the_window, served, with_redis

PASSWORD = "s3cret-pass"
TIGHT = {
    "rate_limit_login_account_ip_per_15min": 3,
    "rate_limit_login_account_per_15min": 6,
    "rate_limit_login_ip_per_15min": 100,
}


async def _sign_up(url: str, address: str = "127.0.0.1") -> str:
    email = unique_email("throttle")
    async with client_from(url, address) as client:
        made = await client.post("/v1/auth/signup", json={"email": email, "password": PASSWORD})
    assert made.status_code == 201, made.text
    return email


async def _sign_in(client: httpx.AsyncClient, email: str, password: str) -> httpx.Response:
    return await client.post("/v1/auth/login", json={"email": email, "password": password})


async def _statuses(url: str, address: str, email: str, passwords: list[str]) -> list[int]:
    async with client_from(url, address) as client:
        return [(await _sign_in(client, email, p)).status_code for p in passwords]


def _assert_limited(response: httpx.Response, reason: str) -> None:
    assert response.status_code == 429, response.text
    assert response.json() == {"error": "rate_limited", "msg": response.json()["msg"]}
    assert reason in response.json()["msg"]
    assert 1 <= int(response.headers["Retry-After"]) <= 900


async def test_someone_hammering_an_account_does_not_lock_out_its_owner(
    settings: Settings,
) -> None:
    async with served(settings.model_copy(update=TIGHT)) as url:
        hold_the_window()
        email = await _sign_up(url)
        # The attacker at 127.0.0.2 gets 3 guesses, then not even the right password works there.
        attacker = await _statuses(
            url, "127.0.0.2", email, ["guess-one", "guess-two", "guess-three"] * 3
        )
        assert attacker == [401, 401, 401] + [429] * 6
        async with client_from(url, "127.0.0.2") as client:
            _assert_limited(await _sign_in(client, email, PASSWORD), "for this account")
        # The owner at 127.0.0.3 mistypes twice and gets in.
        owner = await _statuses(url, "127.0.0.3", email, ["s3cret-pas", "S3cret-pass", PASSWORD])
        assert owner == [401, 401, 200]


async def test_many_addresses_together_lock_an_account_for_its_window_only(
    settings: Settings,
) -> None:
    async with served(settings.model_copy(update=TIGHT)) as url:
        hold_the_window()
        email = await _sign_up(url)
        for address in ("127.0.0.4", "127.0.0.5"):
            assert await _statuses(url, address, email, ["wrong-password"] * 3) == [401] * 3
        # Six failures from anywhere spend the account's budget: now everyone waits.
        async with client_from(url, "127.0.0.6") as client:
            _assert_limited(await _sign_in(client, email, PASSWORD), "for this account")
        # Another account is not affected.
        other = await _sign_up(url)
        assert await _statuses(url, "127.0.0.6", other, [PASSWORD]) == [200]


async def test_successful_sign_ins_cost_nothing(settings: Settings) -> None:
    async with served(settings.model_copy(update=TIGHT)) as url:
        hold_the_window()
        email = await _sign_up(url)
        assert await _statuses(url, "127.0.0.7", email, [PASSWORD] * 8) == [200] * 8
        assert await _statuses(url, "127.0.0.7", email, ["typo-password", PASSWORD]) == [401, 200]


async def test_one_address_trying_many_accounts_is_stopped(settings: Settings) -> None:
    tight = {**TIGHT, "rate_limit_login_ip_per_15min": 4}
    async with served(settings.model_copy(update=tight)) as url:
        hold_the_window()
        async with client_from(url, "127.0.0.8") as client:
            answers = [
                await _sign_in(client, unique_email("stuffing"), "hunter2-x") for _ in range(5)
            ]
        assert [a.status_code for a in answers] == [401] * 4 + [429]
        _assert_limited(answers[-1], "from your address")
        # Someone else, elsewhere, still signs in.
        email = await _sign_up(url)
        assert await _statuses(url, "127.0.0.9", email, [PASSWORD]) == [200]


async def test_sign_ups_are_limited_per_address(settings: Settings) -> None:
    async with served(settings.model_copy(update={"rate_limit_signup_ip_per_hour": 2})) as url:
        hold_the_window()

        async def sign_up_from(address: str) -> httpx.Response:
            body: dict[str, Any] = {"email": unique_email("signup"), "password": PASSWORD}
            async with client_from(url, address) as client:
                return await client.post("/v1/auth/signup", json=body)

        answers = [await sign_up_from("127.0.0.10") for _ in range(3)]
        assert [a.status_code for a in answers] == [201, 201, 429]
        assert answers[-1].json()["error"] == "rate_limited"
        assert "2 an hour" in answers[-1].json()["msg"]
        assert 1 <= int(answers[-1].headers["Retry-After"]) <= 3600
        assert (await sign_up_from("127.0.0.11")).status_code == 201


async def test_processes_sharing_redis_share_the_sign_in_budgets(
    isolated_settings: Settings,
) -> None:
    shared = (await with_redis(isolated_settings)).model_copy(update=TIGHT)
    async with served(shared) as first, served(shared) as second:
        hold_the_window()
        email = await _sign_up(first)
        statuses = [
            (await _statuses(url, "127.0.0.12", email, ["wrong-password"]))[0]
            for url in (first, second, first, second)
        ]
        assert statuses == [401, 401, 401, 429]
        # And a success in one process gives its charge back in both.
        assert await _statuses(second, "127.0.0.13", email, [PASSWORD] * 4) == [200] * 4
        assert await _statuses(
            first, "127.0.0.13", email, ["wrong-one", "wrong-two", PASSWORD]
        ) == [401, 401, 200]
