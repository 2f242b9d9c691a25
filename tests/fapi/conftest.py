"""Fixtures of the compatible-interface tests."""

from collections.abc import AsyncIterator

import httpx
import pytest
from fastapi import FastAPI

from tests.conftest import User, client_for
from tests.fapi.helpers import Bot, make_bot


@pytest.fixture
async def fapi_client(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    async with client_for(app) as client:
        yield client


@pytest.fixture
async def bot(user: User, fapi_client: httpx.AsyncClient) -> Bot:
    return await make_bot(user, fapi_client)


@pytest.fixture
async def live_bot(user: User, live_url: str) -> AsyncIterator[Bot]:
    """A bot on the live server over real HTTP (the WebSocket tests' clients need one)."""
    async with httpx.AsyncClient(base_url=live_url, timeout=30) as client:
        yield await make_bot(user, client)
