"""A form submitted before the page's script has taken it over, in headless Chromium: a slow
network, a quick user, a password manager pressing Enter. The browser's own submission would be a
GET of the same page with the fields in the address (the password in the history and the logs)
and without the page's `?next=`; instead the button waits, disabled, until the script is in."""

import asyncio
from html.parser import HTMLParser
from pathlib import Path

from playwright.async_api import Browser, Page, Route, expect

from papertrade.web.routes import SIGNED_IN_PAGES
from tests.conftest import unique_email
from tests.web.conftest import (
    PHONE,
    WebApp,
    call,
    expect_toast,
    new_context,
    sign_up_in_browser,
)

TEMPLATES = Path(__file__).resolve().parents[2] / "src" / "papertrade" / "web" / "templates"

PASSWORD = "s3cret-pass"


async def held_back(page: Page, script: str) -> asyncio.Event:
    """Hold the page script `script` back until the returned event is set."""
    script_in = asyncio.Event()

    async def slow(route: Route) -> None:
        await script_in.wait()
        await route.continue_()

    await page.route(f"**/static/app/js/pages/{script}", slow)
    return script_in


async def test_signing_in_before_the_script_loads_sends_nothing_and_then_works(
    page: Page, browser: Browser, web: WebApp
) -> None:
    context = await new_context(browser, web)
    try:
        author = await context.new_page()
        email = unique_email("early")
        await sign_up_in_browser(author, email, PASSWORD)
        made = await call(
            author, "POST", "/v1/portfolios", {"name": "Early", "visibility": "public"}
        )
    finally:
        await context.close()

    script_in = await held_back(page, "auth.js")
    sent: list[str] = []  # every request of the page, to find a submission by the browser
    page.on("request", lambda request: sent.append(f"{request.method} {request.url}"))
    target = f"/p/{made['code']}"
    await page.goto(f"/login?next={target}&reason=comment", wait_until="commit")
    await page.locator("#email").fill(email)
    await page.locator("#password").fill(PASSWORD)
    submit = page.locator("#auth-form button[type=submit]")
    await expect(submit).to_be_disabled()
    await page.locator("#password").press("Enter")
    await submit.click(force=True)  # as a person would, ignoring that it is greyed out
    assert PASSWORD not in page.url and "next=" in page.url, page.url
    await expect(page.locator("#password")).to_have_value(PASSWORD)  # nothing reloaded

    script_in.set()
    await expect(submit).to_be_enabled()
    await submit.click()
    await page.wait_for_url(f"{web.url}{target}")
    # Whenever the browser would have sent the form itself, it would be here: a second load of
    # the sign-in page, the password in its address.
    assert not [r for r in sent if PASSWORD in r], sent
    assert [r for r in sent if f"{web.url}/login" in r] == [
        f"GET {web.url}/login?next={target}&reason=comment"
    ]


class _SubmitButtons(HTMLParser):
    """Each form's id and whether each of its submit buttons waits for the script."""

    def __init__(self) -> None:
        super().__init__()
        self.form: str | None = None
        self.found: list[tuple[str, bool]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        named = dict(attrs)
        if tag == "form":
            # A dialog's form only closes its dialog, and only a script opens the dialog.
            dialog = named.get("method") == "dialog"
            self.form = None if dialog else str(named.get("id"))
        elif tag == "button" and self.form is not None and named.get("type") == "submit":
            waits = "disabled" in named and "data-until-ready" in named
            self.found.append((self.form, waits))

    def handle_endtag(self, tag: str) -> None:
        if tag == "form":
            self.form = None


def test_every_form_waits_for_its_script() -> None:
    """Every form a script submits renders its submit buttons disabled until the script has
    taken it over (ui.ready), so a form added later cannot forget it."""
    checked: list[tuple[str, bool]] = []
    for template in sorted(TEMPLATES.glob("*.html")):
        parser = _SubmitButtons()
        parser.feed(template.read_text())
        checked += [(f"{template.name}#{form}", waits) for form, waits in parser.found]
    assert len(checked) >= 25  # the walk found the forms
    assert [form for form, waits in checked if not waits] == []


async def test_an_order_ticket_used_before_its_script_sends_nothing_then_works(
    page: Page, web: WebApp
) -> None:
    await sign_up_in_browser(page, unique_email("early-ticket"))
    made = await call(page, "POST", "/v1/portfolios", {"name": "Early ticket"})
    script_in = await held_back(page, "portfolio.js")
    address = f"{web.url}/app/portfolios/{made['id']}"
    await page.goto(address, wait_until="commit")
    submit = page.locator("#t-submit")
    await expect(submit).to_be_disabled()
    await page.locator("#t-size").fill("0.01")
    await page.locator("#t-size").press("Enter")  # the browser's own submission would go now
    await submit.click(force=True)
    assert page.url == address
    await expect(page.locator("#t-size")).to_have_value("0.01")  # nothing reloaded

    script_in.set()
    # Once in, the script judges what was typed before it: 0.01 USDT is below the minimum, so
    # the button waits with the reason beside it (it may be enabled for a moment before the
    # preview answers, which is why the test does not wait for that).
    await expect(page.locator("#t-problems")).to_contain_text("Below the minimum order")
    await expect(submit).to_be_disabled()
    await page.select_option("#t-symbol", "BTCUSDT")
    await page.select_option("#t-unit", "base")
    await page.fill("#t-size", "0.01")
    await expect(submit).to_be_enabled()
    await submit.click()
    await expect_toast(page, "Filled")
    listed = await call(page, "GET", f"/v1/order?portfolio_id={made['id']}&status=all")
    assert [o["quantity"] for o in listed["orders"]] == [0.01], listed  # the second try only


async def test_every_signed_in_page_enables_its_forms(page: Page) -> None:
    await sign_up_in_browser(page, unique_email("forms-ready"))
    made = await call(page, "POST", "/v1/portfolios", {"name": "Forms"})
    paths = [path for path, *_ in SIGNED_IN_PAGES] + [f"/app/portfolios/{made['id']}"]
    for path in paths:
        await page.goto(path)
        await expect(page.locator("[data-until-ready]"), path).to_have_count(0)
        assert not await page.locator("form button[type=submit][disabled]").count(), path


async def test_the_phone_views_buttons_wait_for_the_portfolio_script(
    browser: Browser, web: WebApp
) -> None:
    """At phone width the portfolio page shows one view at a time, switched by its script. A tap
    on "Positions" before the script ran would look taken and do nothing (a loaded phone, or a
    test clicking right after a reload): the buttons wait, disabled, until the script is in."""
    context = await new_context(browser, web, PHONE)
    try:
        page = await context.new_page()
        await sign_up_in_browser(page, unique_email("phoneviews"))
        made = await call(page, "POST", "/v1/portfolios", {"name": "Phone"})
        script_in = await held_back(page, "portfolio.js")
        await page.goto(f"/app/portfolios/{made['id']}", wait_until="commit")
        positions = page.locator(".phone-tabs [data-phone-view=positions]")
        buy = page.locator(".phone-bar [data-phone-side=buy]")
        await expect(positions).to_be_disabled()
        await expect(buy).to_be_disabled()

        script_in.set()
        await positions.click()  # waits until the script has enabled it
        await expect(positions).to_have_attribute("aria-pressed", "true")
        await expect(page.get_by_role("tab", name="Signals")).to_be_visible()
        await expect(buy).to_be_enabled()
    finally:
        await context.close()
