"""Every snippet of docs/fapi-ws.md runs as written against the live server: the Python ones in
this process, the Node.js one with node (tests/node's pinned packages)."""

import asyncio
import re
import warnings
from pathlib import Path

import orjson
import pytest
from fastapi import FastAPI
from websockets.asyncio.client import connect

from tests.conftest import User
from tests.trading_api.helpers import positions, set_price

DOC = Path(__file__).resolve().parents[2] / "docs" / "fapi-ws.md"
SNIPPET = re.compile(r"<!-- snippet: ([\w-]+) -->\n```python\n(.*?)```", re.S)
JS_SNIPPET = re.compile(r"<!-- snippet: ([\w-]+) -->\n```js\n(.*?)```", re.S)
NODE_DIR = Path(__file__).resolve().parents[1] / "node"
# What each snippet leaves open: its market order's symbol.
HELD = {
    "ws-ccxt-pro": {"BTCUSDT"},
    "ws-raw": set(),
    "ws-python-binance": {"BTCUSDT"},
    "ws-connector": {"ETHUSDT"},
}


def snippets() -> dict[str, str]:
    return dict(SNIPPET.findall(DOC.read_text()))


def test_the_doc_has_a_snippet_per_client() -> None:
    assert set(snippets()) == set(HELD)
    assert set(dict(JS_SNIPPET.findall(DOC.read_text()))) == {"ws-node-binance"}


def run(code: str, base: str, api_key: str, api_secret: str) -> None:
    code = re.sub(r'^BASE_URL = ".*"$', f"BASE_URL = {base!r}", code, flags=re.M)
    code = re.sub(r'^API_KEY = ".*"$', f"API_KEY = {api_key!r}", code, flags=re.M)
    code = re.sub(r'^API_SECRET = ".*"$', f"API_SECRET = {api_secret!r}", code, flags=re.M)
    assert base in code and api_secret in code
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        exec(compile(code, str(DOC), "exec"), {"__name__": "snippet"})


@pytest.mark.parametrize("name", list(HELD))
async def test_ws_snippet_runs(name: str, app: FastAPI, live_url: str, user: User) -> None:
    await set_price(app, "BTCUSDT", "60000")
    await set_price(app, "ETHUSDT", "3000")
    portfolio = await user.portfolio()
    api_key, api_secret = await user.compat_key(portfolio["id"])
    await asyncio.to_thread(run, snippets()[name], live_url, api_key, api_secret)
    held = await positions(user, portfolio["id"])
    assert set(held) == HELD[name]


async def test_the_node_snippet_runs(
    app: FastAPI, live_url: str, user: User, tmp_path: Path
) -> None:
    await set_price(app, "SOLUSDT", "150")
    portfolio = await user.portfolio()
    api_key, api_secret = await user.compat_key(portfolio["id"])
    code = dict(JS_SNIPPET.findall(DOC.read_text()))["ws-node-binance"]
    code = re.sub(r"^const BASE_URL = '.*';$", f"const BASE_URL = '{live_url}';", code, flags=re.M)
    code = re.sub(r"^const API_KEY = '.*';$", f"const API_KEY = '{api_key}';", code, flags=re.M)
    code = re.sub(
        r"^const API_SECRET = '.*';$", f"const API_SECRET = '{api_secret}';", code, flags=re.M
    )
    assert live_url in code and api_secret in code
    script = NODE_DIR / f"snippet-{tmp_path.name}.mjs"  # beside tests/node's node_modules
    script.write_text(code)
    try:
        process = await asyncio.create_subprocess_exec(
            "node",
            script.name,
            cwd=NODE_DIR,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await asyncio.wait_for(process.communicate(), timeout=60)
    finally:
        script.unlink()
    assert process.returncode == 0, err.decode()[-2000:]
    lines = out.decode().splitlines()  # the client logs its connections to the console too
    assert float(next(line for line in lines if line.startswith("mark "))[5:]) == 150, lines
    assert "ORDER_TRADE_UPDATE FILLED" in lines and "position 1" in lines, lines
    assert set(await positions(user, portfolio["id"])) == {"SOLUSDT"}


async def test_the_websocket_api_is_served_at_both_addresses(app: FastAPI, live_url: str) -> None:
    """docs/fapi-ws.md, "The WebSocket API": at /ws-fapi/v1 and under the legacy prefix."""
    await set_price(app, "ETHUSDT", "3000")
    base = "ws://" + live_url.removeprefix("http://")
    for path in ("/ws-fapi/v1", app.state.ctx.settings.legacy_prefix + "/binance/ws-fapi/v1"):
        async with connect(base + path) as ws:
            await ws.send('{"id": "p", "method": "ticker.price", "params": {"symbol": "ETHUSDT"}}')
            answer = orjson.loads(await ws.recv())
        assert (answer["id"], answer["status"]) == ("p", 200), (path, answer)
        assert answer["result"]["price"] == "3000.00"
