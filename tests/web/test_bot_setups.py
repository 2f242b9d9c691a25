"""Connecting a bot from the portfolio's API Keys panel (issue 33, point 10): ready-to-copy setups
for ccxt, python-binance, freqtrade and a TradingView alert, with this server's URL and the new
key filled in. The setups are taken from the page as a user copies them (the secret pasted where
the placeholder says) and run against the live server the browser uses."""

import asyncio
import json
import re
import warnings
from typing import Any

import ccxt
import httpx
import pytest
from playwright.async_api import Browser, Page, ViewportSize, expect

from tests.conftest import unique_email
from tests.fapi.clients import CCXT_URL_KEYS
from tests.trading_api.helpers import set_price
from tests.web.conftest import (
    DESKTOP,
    PHONE,
    Steps,
    WebApp,
    call,
    new_context,
    sign_up_in_browser,
)
from tests.web.test_journey import CLIPBOARD_WHEN_IT_HOLDS, tradingview

SECRET_PLACEHOLDER = "PASTE_YOUR_API_SECRET_HERE"
KEY_PLACEHOLDER = "PASTE_YOUR_API_KEY_HERE"


def run_snippet(code: str) -> list[tuple[Any, ...]]:
    """Run a Python setup as written; returns what it printed."""
    printed: list[tuple[Any, ...]] = []
    with warnings.catch_warnings():  # python-binance imports deprecated websockets APIs
        warnings.simplefilter("ignore", DeprecationWarning)
        namespace = {"__name__": "snippet", "print": lambda *args, **_: printed.append(args)}
        exec(compile(code, "<snippet from the page>", "exec"), namespace)
    return printed


async def snippet(page: Page, tab: str, field: str) -> str:
    await page.get_by_role("tab", name=tab, exact=True).click()
    await expect(page.locator(f"#{field}")).to_be_visible()
    return await page.input_value(f"#{field}")


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
async def test_a_bot_connects_with_the_setups_the_page_shows(
    browser: Browser, web: WebApp, viewport: ViewportSize, request: pytest.FixtureRequest
) -> None:
    await set_price(web.app, "ETHUSDT", "3000")
    context = await new_context(browser, web, viewport)
    page = await context.new_page()
    steps = Steps(page, request.node.name)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        async with steps("a portfolio, no key yet"):
            await sign_up_in_browser(page, unique_email("bots"))
            made = await call(
                page, "POST", "/v1/portfolios", {"name": "Bot", "initial_balance": "5000"}
            )
            await page.goto("/app/settings/api-keys")  # the "API keys" page leads there
            bots = page.locator("#bot-portfolios")
            await bots.get_by_role("link", name=f"Bot ({made['code']})").click()
            await page.wait_for_url(f"**/app/portfolios/{made['id']}#bot-setups-title")
            setups = page.locator("#bot-setups")
            await setups.get_by_role("heading", name="Connect a bot").scroll_into_view_if_needed()
            code = await snippet(page, "ccxt", "bot-ccxt-code")
            assert f'BASE_URL = "{web.url}"' in code and KEY_PLACEHOLDER in code
            await expect(page.locator("#bot-key-note")).to_contain_text("Create a key pair")

        async with steps("a new key pair is filled in, its secret is not"):
            await page.fill("#compat-note", "my bot")
            await page.click("#compat-form button[type=submit]")
            api_key = await page.input_value("#new-api-key")
            secret = await page.input_value("#new-api-secret")
            chosen = page.locator("#bot-key option:checked")
            await expect(chosen).to_have_text(f"{api_key[:8]}… (my bot)")
            await snippet(page, "ccxt", "bot-ccxt-code")
            # The page also reloads its key list every few seconds: a reload that answers just
            # before the new pair's own shows the pair for a moment without its full key.
            filled_in = re.compile(re.escape(f'API_KEY = "{api_key}"'))
            await expect(page.locator("#bot-ccxt-code")).to_have_value(filled_in)
            code = await page.input_value("#bot-ccxt-code")
            assert secret not in code and SECRET_PLACEHOLDER in code
            await expect(page.locator("#bot-key-note")).to_contain_text(
                f"{api_key[:8]}… is filled in"
            )

        async with steps("ccxt, as copied, reads the portfolio's balance"):
            await page.locator("#bot-ccxt").get_by_role("button", name="Copy").click()
            copied = await page.evaluate(CLIPBOARD_WHEN_IT_HOLDS, code)
            assert copied == code
            printed = await asyncio.to_thread(
                run_snippet, copied.replace(SECRET_PLACEHOLDER, secret)
            )
            assert printed == [({"free": 5000.0, "used": 0.0, "total": 5000.0},)]

        async with steps("python-binance, as shown, reads it too"):
            code = await snippet(page, "python-binance", "bot-binance-code")
            assert f'BASE_URL = "{web.url}"' in code and f'API_KEY = "{api_key}"' in code
            printed = await asyncio.to_thread(run_snippet, code.replace(SECRET_PLACEHOLDER, secret))
            (balances,) = printed[0]
            usdt = next(b for b in balances if b["asset"] == "USDT")
            assert float(usdt["balance"]) == 5000

        async with steps("freqtrade's config points ccxt here with the key"):
            config = json.loads(await snippet(page, "freqtrade", "bot-freqtrade-code"))
            exchange = config["exchange"]
            assert config["trading_mode"] == "futures" and exchange["name"] == "binance"
            assert exchange["key"] == api_key and exchange["secret"] == SECRET_PLACEHOLDER
            urls = {name: f"{web.url}/fapi/{v}" for name, v in CCXT_URL_KEYS.items()}
            assert exchange["ccxt_config"] == exchange["ccxt_async_config"]
            assert exchange["ccxt_config"]["urls"] == {"api": urls}
            client = ccxt.binanceusdm(  # what freqtrade builds from it
                {**exchange["ccxt_config"], "apiKey": api_key, "secret": secret}
            )
            balance = await asyncio.to_thread(client.fetch_balance)
            assert balance["USDT"]["total"] == 5000

        async with steps("TradingView: the webhook URL and message"):
            url = await snippet(page, "TradingView", "bot-tv-url")
            assert url.startswith(f"{web.url}/webhook/tv/")
            await page.locator("#webhook-form button[type=submit]").click()
            generated = await page.input_value("#new-webhook-url")
            await expect(page.locator("#bot-tv-url")).to_have_value(generated)
            message = await page.input_value("#bot-tv-message")
            body = tradingview(message, action="buy", contracts="0.1", position="0.1")
            async with httpx.AsyncClient() as client_http:
                sent = await client_http.post(
                    generated, content=body, headers={"Content-Type": "text/plain"}
                )
            assert sent.status_code == 200, sent.text

        async with steps("after a reload the key is no longer known in full"):
            await page.reload()
            await expect(chosen).to_have_text(f"{api_key[:8]}… (my bot)")
            code = await snippet(page, "ccxt", "bot-ccxt-code")
            assert api_key not in code and f"starts with {api_key[:8]}" in code
            width = await page.evaluate("document.documentElement.scrollWidth")
            assert width <= viewport["width"], f"the page scrolls sideways: {width} px"
        assert not errors, f"JavaScript errors on the page: {errors}"
    finally:
        await context.close()
