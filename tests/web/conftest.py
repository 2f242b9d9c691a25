"""Browser fixtures: the app on a real port whose public URL is its own, and headless Chromium.

The session `app` fixture uses https://testserver as its public URL, which a real browser cannot
reach; these tests run their own app on 127.0.0.1 with that address as PUBLIC_BASE_URL (so the
Origin check and non-Secure cookies of plain-http local development apply) and their own
database. Chromium is Debian's (its headless shell, else /usr/bin/chromium); Playwright drives it.
"""

import asyncio
import base64
import json
import os
import re
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from fastapi import FastAPI
from playwright.async_api import (
    Browser,
    BrowserContext,
    Page,
    ViewportSize,
    async_playwright,
    expect,
)
from playwright.async_api import TimeoutError as PlaywrightTimeout

from tests.conftest import (
    PG_URL,
    _drop_postgres_database,
    _fresh_postgres_database,
    make_settings,
    running_app,
)

# Debian's headless shell (package chromium-headless-shell, what Playwright itself runs headless)
# where installed: the same Blink and V8 as /usr/bin/chromium without the browser's own interface,
# it costs 40 % of the CPU per page (a new context and a portfolio page: 1.2 s against 2.9 s).
HEADLESS_SHELL = Path("/usr/bin/chromium-headless-shell")
CHROMIUM = os.environ.get(
    "PAPERTRADE_CHROMIUM", str(HEADLESS_SHELL) if HEADLESS_SHELL.exists() else "/usr/bin/chromium"
)
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
HAVE_CHROMIUM = Path(CHROMIUM).exists()
ARTIFACTS = Path(__file__).resolve().parents[2] / "artifacts" / "web"
DESKTOP: ViewportSize = {"width": 1366, "height": 900}
PHONE: ViewportSize = {"width": 390, "height": 844}
# Ceilings, not waits: an expectation returns as soon as it holds. A page under two busy loops
# beside both halves of the suite can take past 10 s to answer.
expect.set_options(timeout=20_000)
# The email provider's (Resend's, Svix-format) webhook secret of the shared app, so a test can
# report a bounce the way the provider does (test_suppressed_address_banner.py).
RESEND_SECRET = "whsec_" + base64.b64encode(b"resend-web-test-signing-key-32by").decode()


@dataclass
class WebApp:
    app: FastAPI
    url: str


@asynccontextmanager
async def serve_on_own_origin(
    database_url: str, var_dir: Path, **overrides: Any
) -> AsyncIterator[WebApp]:
    """Start the app and uvicorn on a free 127.0.0.1 port whose URL is the app's public URL."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    # The market ticks once a second, as in production (Settings' default), not the suite's tenth
    # of a second: an open page redraws its chart and marks at every tick, and at ten a second
    # that was a fifth of a core per page, for prices the tests set themselves.
    settings = make_settings(
        database_url, var_dir, public_base_url=url, **{"sim_tick_ms": 1000, **overrides}
    )
    async with running_app(settings) as app:
        config = uvicorn.Config(app, lifespan="off", log_level="warning", ws="websockets-sansio")
        server = uvicorn.Server(config)
        task = asyncio.create_task(server.serve(sockets=[sock]))
        while not server.started:
            if task.done():
                task.result()
            await asyncio.sleep(0.01)
        try:
            yield WebApp(app, url)
        finally:
            server.should_exit = True
            await task
            sock.close()


@pytest.fixture(scope="session")
async def web(
    tmp_path_factory: pytest.TempPathFactory, worker_id_name: str, uses_database: None
) -> AsyncIterator[WebApp]:
    if PG_URL:
        database_url = await _fresh_postgres_database(f"papertrade_test_web_{worker_id_name}")
    else:
        database_url = f"sqlite+aiosqlite:///{tmp_path_factory.mktemp('webdb') / 'web.db'}"
    async with serve_on_own_origin(
        database_url, tmp_path_factory.mktemp("webvar"), resend_webhook_secret=RESEND_SECRET
    ) as served:
        yield served


@asynccontextmanager
async def own_web(name: str, tmp_path: Path, **overrides: Any) -> AsyncIterator[WebApp]:
    """An app of its own, on its own database, for a test that needs settings the shared `web`
    has not (an outside service's address, a small limit). `name` names its PostgreSQL
    database."""
    database = f"papertrade_web_{name}"
    url = (
        await _fresh_postgres_database(database)
        if PG_URL
        else f"sqlite+aiosqlite:///{tmp_path / f'{name}.db'}"
    )
    try:
        async with serve_on_own_origin(url, tmp_path / f"{name}-var", **overrides) as served:
            yield served
    finally:
        if PG_URL:
            await _drop_postgres_database(database)


@pytest.fixture(scope="session")
async def browser() -> AsyncIterator[Browser]:
    if not HAVE_CHROMIUM:
        if os.environ.get("CI"):
            pytest.fail(f"Chromium not found at {CHROMIUM}: .ci/run installs Debian's chromium")
        pytest.skip(f"Chromium not found at {CHROMIUM} (apt-get install chromium)")
    async with async_playwright() as playwright:
        launched = await playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield launched
        finally:
            await launched.close()


class Steps:
    """Named steps of a browser test; a failing step leaves a screenshot in artifacts/web/."""

    def __init__(self, page: Page, test_name: str):
        self.page = page
        self.test_name = re.sub(r"[^A-Za-z0-9_.-]+", "_", test_name)
        self.errors: list[str] = []

    @asynccontextmanager
    async def __call__(self, name: str) -> AsyncIterator[None]:
        try:
            yield
        except BaseException:
            path = await self.screenshot(name)
            print(f"step {name!r} failed; screenshot: {path}")  # noqa: T201
            raise

    async def screenshot(self, name: str) -> Path:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        path = ARTIFACTS / f"{self.test_name}--{re.sub(r'[^A-Za-z0-9_.-]+', '_', name)}.png"
        try:
            await self.page.screenshot(path=str(path), full_page=True)
        except Exception as exc:  # a crashed page still must not hide the original failure
            print(f"could not save {path}: {exc}")  # noqa: T201
        return path


# Every toast a page shows, in order, with its kind: a toast lives 4 s, and on a loaded machine a
# test may first look after it has gone (expect_toast).
TOAST_RECORD = """
window.__toasts = [];
new MutationObserver((changes) => {
  for (const change of changes)
    for (const node of change.addedNodes)
      if (node.classList?.contains('toast'))
        window.__toasts.push({ kind: node.className, text: node.textContent });
}).observe(document, { childList: true, subtree: true });
"""


async def expect_toast(page: Page, text: str, kind: str = "") -> None:
    """The page showed a toast containing `text` (of class `toast-<kind>` if given) since the toast
    the previous call found, whether or not it is still on screen."""
    try:
        await page.wait_for_function(
            """([text, kind]) => {
              const wanted = (t) =>
                t.text.includes(text) && (!kind || t.kind.split(' ').includes(`toast-${kind}`));
              const at = window.__toasts.findIndex(wanted);
              if (at < 0) return false;
              window.__toasts.splice(0, at + 1);
              return true;
            }""",
            arg=[text, kind],
        )
    except PlaywrightTimeout:
        shown = await page.evaluate("window.__toasts")
        errors = await page.evaluate(
            "[...document.querySelectorAll('.form-error')].map((e) => e.textContent)"
            ".filter(Boolean)"
        )
        raise AssertionError(
            f"no toast said {text!r}; toasts since the last one found: {shown}; "
            f"form errors shown: {errors}; at {page.url}"
        ) from None


async def new_context(
    browser: Browser, web: WebApp, viewport: ViewportSize = DESKTOP
) -> BrowserContext:
    context = await browser.new_context(
        base_url=web.url, viewport=viewport, locale="en-US", timezone_id="UTC"
    )
    await context.add_init_script(TOAST_RECORD)
    await context.grant_permissions(["clipboard-read", "clipboard-write"], origin=web.url)
    context.set_default_timeout(20_000)
    return context


@asynccontextmanager
async def page_on(
    browser: Browser, web: WebApp, request: pytest.FixtureRequest
) -> AsyncIterator[Page]:
    """A page of a new browser context on `web`; JavaScript errors on it fail the test."""
    context = await new_context(browser, web)
    opened = await context.new_page()
    errors: list[str] = []
    opened.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        yield opened
        assert not errors, f"JavaScript errors on the page: {errors}"
    finally:
        report = getattr(request.node, "rep_call", None)
        if report is not None and report.failed:
            await Steps(opened, request.node.name).screenshot("at-failure")
        await context.close()


@pytest.fixture
async def page(
    browser: Browser, web: WebApp, request: pytest.FixtureRequest
) -> AsyncIterator[Page]:
    async with page_on(browser, web, request) as opened:
        yield opened


async def sign_up_in_browser(page: Page, email: str, password: str = "s3cret-pass") -> None:
    await page.goto("/signup")
    await page.fill("#email", email)
    await page.fill("#password", password)
    await page.click("#auth-form button[type=submit]")
    await page.wait_for_url("**/app")
    # The portfolio list has loaded (and the layout has settled).
    await expect(page.locator("#pf-list")).not_to_have_attribute("aria-busy", "true")


async def call(page: Page, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
    """The /v1 API from inside the page, as the app calls it (cookie + X-CSRF-Token)."""
    script = """async ([method, path, body]) => {
        const csrf = document.cookie.split('; ').find((c) => c.startsWith('csrf_token='));
        const response = await fetch(path, {
            method,
            headers: {'Content-Type': 'application/json',
                      'X-CSRF-Token': csrf ? decodeURIComponent(csrf.split('=')[1]) : ''},
            body: body === null ? undefined : JSON.stringify(body),
        });
        return [response.status, await response.text()];
    }"""
    status, text = await page.evaluate(script, [method, path, body])
    assert status < 300, (status, text)
    return json.loads(text)


async def listening(web: WebApp, topic: str) -> None:
    """Until some page's socket has subscribed to `topic` on the server (e.g. "orders:12", one
    of the four channels a page's "portfolio:12" names): a page that shows its data has read it,
    but its subscription may still be on its way, and what happens before it arrives is only in
    the next read, never pushed."""
    hub = web.app.state.realtime.hub
    for _ in range(400):
        if hub.has(topic):
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"no page subscribed to {topic} within 20 s")


@pytest.fixture
def steps(page: Page, request: pytest.FixtureRequest) -> Steps:
    return Steps(page, request.node.name)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    setattr(item, f"rep_{report.when}", report)
    return report
