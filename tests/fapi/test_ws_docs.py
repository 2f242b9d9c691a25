"""Every snippet of docs/fapi-ws.md runs as written against the live server."""

import asyncio
import re
import warnings
from pathlib import Path

import pytest
from fastapi import FastAPI

from tests.conftest import User
from tests.trading_api.helpers import positions, set_price

DOC = Path(__file__).resolve().parents[2] / "docs" / "fapi-ws.md"
SNIPPET = re.compile(r"<!-- snippet: ([\w-]+) -->\n```python\n(.*?)```", re.S)


def snippets() -> dict[str, str]:
    return dict(SNIPPET.findall(DOC.read_text()))


def run(code: str, base: str, api_key: str, api_secret: str) -> None:
    code = re.sub(r'^BASE_URL = ".*"$', f"BASE_URL = {base!r}", code, flags=re.M)
    code = re.sub(r'^API_KEY = ".*"$', f"API_KEY = {api_key!r}", code, flags=re.M)
    code = re.sub(r'^API_SECRET = ".*"$', f"API_SECRET = {api_secret!r}", code, flags=re.M)
    assert base in code and api_secret in code
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        exec(compile(code, str(DOC), "exec"), {"__name__": "snippet"})


def test_the_doc_has_its_snippets() -> None:
    assert set(snippets()) == {"ws-ccxt-pro", "ws-raw"}


@pytest.mark.parametrize("name", ["ws-ccxt-pro", "ws-raw"])
async def test_ws_snippet_runs(name: str, app: FastAPI, live_url: str, user: User) -> None:
    await set_price(app, "BTCUSDT", "60000")
    portfolio = await user.portfolio()
    api_key, api_secret = await user.compat_key(portfolio["id"])
    await asyncio.to_thread(run, snippets()[name], live_url, api_key, api_secret)
    held = await positions(user, portfolio["id"])
    assert set(held) == ({"BTCUSDT"} if name == "ws-ccxt-pro" else set())
