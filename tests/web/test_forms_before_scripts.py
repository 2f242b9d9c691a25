"""A form submitted before the page's script has taken it over, in headless Chromium: a slow
network, a quick user, a password manager pressing Enter. The browser's own submission would be a
GET of the same page with the fields in the address (the password in the history and the logs)
and without the page's `?next=`; instead the button waits, disabled, until the script is in."""

import asyncio

from playwright.async_api import Browser, Page, Route, expect

from tests.conftest import unique_email
from tests.web.conftest import WebApp, call, new_context, sign_up_in_browser

PASSWORD = "s3cret-pass"


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

    script_in = asyncio.Event()

    async def slow(route: Route) -> None:
        await script_in.wait()
        await route.continue_()

    await page.route("**/static/app/js/pages/auth.js", slow)
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
