"""Commonly used passwords are refused at sign-up; sign-in compares the password before judging
anything about it (issue 14 item 11)."""

import httpx
import pytest
from argon2 import PasswordHasher
from fastapi import FastAPI
from pydantic import ValidationError
from sqlalchemy import select, update

from papertrade.config import Settings
from papertrade.kit.security import hash_password
from papertrade.models import User as UserRow
from tests.conftest import User, unique_email


async def _sign_up(client: httpx.AsyncClient, password: str, email: str = "") -> httpx.Response:
    body = {"email": email or unique_email("pw"), "password": password}
    return await client.post("/v1/auth/signup", json=body)


async def test_common_passwords_and_simple_variations_are_refused(anon: httpx.AsyncClient) -> None:
    for password in [
        "password",
        "12345678",
        "Password1",
        "P@ssw0rd",
        "qwertyuiop",
        "iloveyou2",
        "aaaaaaaa",
        "abcdefgh",
        "papertrade1",
    ]:
        refused = await _sign_up(anon, password)
        assert refused.status_code == 422, password
        assert refused.json()["error"] == "validation_error"
        assert "commonly used password" in refused.json()["msg"], refused.json()


async def test_the_email_itself_is_no_password(anon: httpx.AsyncClient) -> None:
    email = unique_email("mirror")
    refused = await _sign_up(anon, email.partition("@")[0], email=email)
    assert refused.status_code == 422 and "commonly used" in refused.json()["msg"]


async def test_uncommon_passwords_are_accepted(anon: httpx.AsyncClient) -> None:
    for password in ["correct horse battery", "blue-kettle-42", "Mango!Tree7"]:
        assert (await _sign_up(anon, password)).status_code == 201, password


async def test_a_wrong_password_of_any_shape_is_just_wrong(
    user: User, anon: httpx.AsyncClient
) -> None:
    for email, password in [
        (user.email, "abc"),
        (user.email, ""),
        (user.email, "x" * 300),
        ("not-an-email", "abc"),
        ("", ""),
    ]:
        answer = await anon.post("/v1/auth/login", json={"email": email, "password": password})
        assert answer.status_code == 401, (email, password, answer.text)
        assert answer.json() == {
            "error": "invalid_credentials",
            "msg": "Email or password is incorrect.",
        }


async def test_an_account_made_before_the_rule_still_signs_in(
    app: FastAPI, anon: httpx.AsyncClient
) -> None:
    email = unique_email("old")
    async with app.state.ctx.db.unit_of_work() as session:
        session.add(UserRow(email=email, password_hash=hash_password("12345678"), display_name=""))
    answer = await anon.post("/v1/auth/login", json={"email": email, "password": "12345678"})
    assert answer.status_code == 200 and answer.json()["email"] == email


async def test_hashes_take_the_configured_cost_and_older_costs_still_sign_in(
    app: FastAPI, anon: httpx.AsyncClient
) -> None:
    """PASSWORD_HASH_TIME_COST / _MEMORY_KIB set the cost of new hashes (the suite runs at the
    lowest allowed); a hash made at another cost (the default's) keeps working."""
    email = unique_email("cost")
    assert (await _sign_up(anon, "a-long-pass-1", email)).status_code == 201
    async with app.state.ctx.db.reader() as session:
        stored = await session.scalar(select(UserRow.password_hash).where(UserRow.email == email))
    assert stored is not None and stored.startswith("$argon2id$v=19$m=8192,t=1,")
    default_cost = PasswordHasher().hash("a-long-pass-2")  # t=3, 64 MiB
    assert default_cost.startswith("$argon2id$v=19$m=65536,t=3,")
    async with app.state.ctx.db.unit_of_work() as session:
        await session.execute(
            update(UserRow).where(UserRow.email == email).values(password_hash=default_cost)
        )
    answer = await anon.post("/v1/auth/login", json={"email": email, "password": "a-long-pass-2"})
    assert answer.status_code == 200, answer.text
    with pytest.raises(ValidationError):
        Settings(password_hash_memory_kib=1024)  # below 8 MiB is refused
