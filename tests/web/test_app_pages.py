"""The other pages in headless Chromium: settings keys, public pages, forms, phone width."""

import httpx
from playwright.async_api import Browser, Page, expect
from playwright.async_api import TimeoutError as PlaywrightTimeout

from tests.conftest import unique_email
from tests.trading_api.helpers import set_price
from tests.web.conftest import PHONE, Steps, WebApp, call, new_context, sign_up_in_browser


async def test_settings_api_keys(page: Page, web: WebApp, steps: Steps) -> None:
    async with steps("create a read key, shown once"):
        await sign_up_in_browser(page, unique_email("keys"))
        await page.click("text=API keys")
        await page.wait_for_url("**/app/settings/api-keys")
        await expect(page.locator("#keys-empty")).to_be_visible()
        await page.fill("#key-note", "dashboard script")
        await page.click("#create-key button[type=submit]")
        await expect(page.locator("#key-once .warning")).to_contain_text("shown only this once")
        key = await page.input_value("#new-native-key")
        row = page.locator("#keys-table tbody tr").first
        await expect(row).to_contain_text("dashboard script")
        await expect(row).to_contain_text("read")
        await expect(row).to_contain_text("never")

    async with steps("the key works, its last use shows, and it is read-only"):
        async with httpx.AsyncClient(base_url=web.url) as client:
            auth = {"Authorization": f"Bearer {key}"}
            assert (await client.get("/v1/portfolios/my", headers=auth)).status_code == 200
            denied = await client.post("/v1/portfolios", json={"name": "x"}, headers=auth)
            assert denied.status_code == 403
        await page.reload()
        assert key not in await page.content()
        await expect(row).to_contain_text("just now")

    async with steps("a write key, then revoke the read key"):
        await page.click('label[for="scope-write"]')
        await page.fill("#key-note", "x" * 200)  # the longest note still fits the table
        await page.click("#create-key button[type=submit]")
        await expect(page.locator("#keys-table tbody tr")).to_have_count(2)
        await expect(page.locator("#keys-table tbody tr").first).to_contain_text("write")
        read_row = page.locator("#keys-table tbody tr", has_text="dashboard script")
        await read_row.get_by_role("button", name="Revoke").click()
        await page.locator("dialog[open]").get_by_role("button", name="Revoke").click()
        await expect(read_row).to_contain_text("revoked")
        async with httpx.AsyncClient(base_url=web.url) as client:
            gone = await client.get("/v1/portfolios/my", headers={"Authorization": f"Bearer {key}"})
            assert gone.status_code == 401


async def test_public_pages_and_market_signed_out(
    page: Page, browser: Browser, web: WebApp, steps: Steps
) -> None:
    async with steps("a public portfolio with a trade"):
        await set_price(web.app, "SOLUSDT", "150")
        await sign_up_in_browser(page, unique_email("public"))
        await page.fill("#pf-name", "Sunny SOL")
        await page.check("#pf-public")
        await page.click("#create-portfolio button[type=submit]")
        await page.wait_for_url("**/app/portfolios/*")
        code = await page.text_content("#pf-code")
        assert code and code.startswith("P")
        pid = int(page.url.rsplit("/", 1)[1])
        await call(
            page,
            "POST",
            "/v1/order",
            {
                "portfolio_id": pid,
                "symbol": "SOLUSDT",
                "side": "buy",
                "type": "market",
                "size_usd": "1500",
            },
        )
        await page.goto("/app")
        card = page.locator(f'[data-portfolio-id="{pid}"]')
        await expect(card).to_contain_text("Sunny SOL")
        await expect(card.locator(".chip")).to_contain_text("SOLUSDT")

    visitor_context = await new_context(browser, web)
    visitor = await visitor_context.new_page()
    try:
        async with steps("the square and the public page, signed out"):
            await visitor.goto("/square")
            await expect(visitor.locator("#sim-banner")).to_contain_text("Simulated market feed")
            entry = visitor.locator(f'#square-table tr[data-code="{code}"]')
            await expect(entry).to_contain_text("Sunny SOL")
            await entry.get_by_role("link", name="Sunny SOL").click()
            await visitor.wait_for_url(f"**/p/{code}")
            await expect(visitor.locator("#pub-name")).to_have_text("Sunny SOL")
            await expect(visitor.locator("#pub-trades")).to_have_text("1")
            missing = await visitor.goto("/p/P9999999")
            assert missing is not None and missing.status == 404
            await expect(visitor.locator("#not-found")).to_contain_text("No public portfolio")

        async with steps("the market page: chart and live price"):
            await visitor.goto("/markets")
            await visitor.fill("#market-filter", "SOL")
            await visitor.get_by_role("link", name="SOLUSDT").click()
            await visitor.wait_for_url("**/markets/SOLUSDT")
            await expect(visitor.locator("#mark-price")).to_have_text("150.000")
            await expect(visitor.locator("#candles canvas").first).to_be_visible()
            await set_price(web.app, "SOLUSDT", "151.5")
            await expect(visitor.locator("#mark-price")).to_have_text("151.500")
            await visitor.click('[data-interval="1h"]')
            await expect(visitor.locator('[data-interval="1h"]')).to_have_attribute(
                "aria-pressed", "true"
            )
            await expect(visitor.locator("#market-error")).to_be_empty()
    finally:
        await visitor_context.close()


async def test_forms_explain_errors_and_work_from_the_keyboard(
    page: Page, web: WebApp, steps: Steps
) -> None:
    email = unique_email("forms")
    await set_price(web.app, "BTCUSDT", "60000")
    async with steps("sign-up errors"):
        await page.goto("/signup")
        await page.fill("#email", "not-an-email")
        await page.fill("#password", "short")
        await page.press("#password", "Enter")
        await expect(page.locator("#auth-error")).to_have_text("Enter a valid email address.")
        await expect(page.locator("#email")).to_be_focused()
        await sign_up_in_browser(page, email)
        await page.click("#sign-out")
        await page.wait_for_url("**/login")
        await page.goto("/signup")
        await page.fill("#email", email)
        await page.fill("#password", "another-password")
        await page.press("#password", "Enter")
        await expect(page.locator("#auth-error")).to_contain_text("already exists")

    async with steps("sign in with the keyboard only"):
        await page.goto("/login")
        await expect(page.locator("#email")).to_be_focused()  # autofocus
        await page.keyboard.type(email)
        await page.keyboard.press("Tab")
        await page.keyboard.type("wrong-password")
        await page.keyboard.press("Enter")
        await expect(page.locator("#auth-error")).to_have_text("Wrong email or password.")
        await page.fill("#password", "s3cret-pass")
        await page.keyboard.press("Enter")
        await page.wait_for_url("**/app")
        await expect(page.locator("#pf-list")).not_to_have_attribute("aria-busy", "true")

    async with steps("order ticket errors come from the API, in words"):
        await page.fill("#pf-name", "Errors")
        await page.keyboard.press("Enter")
        await page.wait_for_url("**/app/portfolios/*")
        # A user picks from the ticket's markets once they have loaded (slow on a busy machine).
        await expect(page.locator("#t-symbol")).not_to_have_value("")
        await page.focus("#t-size")
        await page.keyboard.press("Enter")
        await expect(page.locator("#ticket-error")).to_have_text("Enter a size.")
        await page.select_option("#t-unit", "base")
        await page.fill("#t-size", "0.0015")
        await page.keyboard.press("Enter")
        await expect(page.locator("#ticket-error")).to_contain_text("not a multiple of")
        await page.fill("#t-size", "0.001")  # under the minimum the ticket says why and waits
        await expect(page.locator("#t-problems")).to_contain_text("Below the minimum order")
        await expect(page.locator("#t-submit")).to_be_disabled()
        await page.click('label[for="t-limit"]')
        await page.fill("#t-size", "0.01")
        await expect(page.locator("#t-submit")).to_be_enabled()  # the preview has seen 0.01
        await page.keyboard.press("Enter")
        await expect(page.locator("#ticket-error")).to_have_text("A limit order needs a price.")
        await expect(page.locator("#t-price")).to_be_focused()

    async with steps("tabs follow the arrow keys"):
        await page.focus("#tab-positions")
        await page.keyboard.press("ArrowRight")
        await expect(page.locator("#tab-orders")).to_be_focused()
        await expect(page.locator("#panel-orders")).to_be_visible()
        await expect(page.locator("#panel-positions")).to_be_hidden()


# The elements that reach past the right edge, innermost first, to say what widened the page.
WIDER_THAN_THE_SCREEN = """() => [
  document.documentElement.scrollWidth,
  [...document.querySelectorAll('body *')]
    .filter((el) => el.getBoundingClientRect().right > window.innerWidth + 0.5)
    .reverse().slice(0, 5)
    .map((el) => `${el.tagName.toLowerCase()}#${el.id}.${el.className}`
      + ` ${Math.round(el.getBoundingClientRect().right)}px`),
]"""


async def test_phone_width_with_long_names_and_large_numbers(browser: Browser, web: WebApp) -> None:
    context = await new_context(browser, web, PHONE)
    page = await context.new_page()
    steps = Steps(page, "test_phone_width")
    long_name = "An extraordinarily long portfolio name " * 2 + "Supercalifragilistic" * 3
    try:
        async with steps("set up a rich portfolio"):
            await set_price(web.app, "BTCUSDT", "98765.4")
            await sign_up_in_browser(page, unique_email("a-very-long-mailbox-name-for-layout"))
            await page.fill("#pf-name", long_name[:100])
            await page.fill("#pf-balance", "100000000")
            await page.check("#pf-public")
            await page.click("#create-portfolio button[type=submit]")
            await page.wait_for_url("**/app/portfolios/*")
            pid = int(page.url.rsplit("/", 1)[1])
            await call(
                page,
                "POST",
                "/v1/order",
                {
                    "portfolio_id": pid,
                    "symbol": "BTCUSDT",
                    "side": "buy",
                    "type": "market",
                    "size_usd": "5000000",
                },
            )
            await call(page, "POST", f"/v1/portfolios/{pid}/api-keys", {"note": "n" * 200})
            code = await page.text_content("#pf-code")
        for path in [
            f"/app/portfolios/{pid}",
            "/app",
            "/app/settings/api-keys",
            "/markets",
            "/markets/BTCUSDT",
            "/square",
            f"/p/{code}",
            "/",
            "/login",
        ]:
            async with steps(f"no sideways scrolling on {path}"):
                await page.goto(path)
                # Not "networkidle": a live page keeps its connections busy, and on a loaded
                # machine that wait timed out. The footer is the end of every page's document.
                await page.locator("footer").wait_for()
                # Settled, the page is no wider than the phone (charts size themselves a frame
                # after they load, so give the layout a moment).
                fits = f"document.documentElement.scrollWidth <= {PHONE['width']}"
                try:
                    await page.wait_for_function(fits, timeout=5000)
                    # Still so once the page's scripts have had time to fetch and render data.
                    await page.wait_for_load_state("load")
                    await page.wait_for_timeout(700)
                except PlaywrightTimeout:
                    pass
                width, wide = await page.evaluate(WIDER_THAN_THE_SCREEN)
                assert width <= PHONE["width"], f"{path} is {width}px wide on a phone: {wide}"
    finally:
        await context.close()
