"""The pages the account mails link to, in a real browser: the verification link confirms the
address (once), the reset link opens a form that says plainly what is wrong, and the new
password signs in; "Forgot your password?" mails the link."""

import re
from urllib.parse import urlsplit

from playwright.async_api import Browser, Page, expect
from sqlalchemy import select

from papertrade.models import EmailMessage
from tests.conftest import unique_email
from tests.web.conftest import Steps, WebApp, call, new_context, sign_up_in_browser


async def _mailed_link(web: WebApp, address: str, path: str, count: int = 1) -> str:
    """The link in the newest mail queued to `address` (the page under test needs no SMTP)."""
    async with web.app.state.ctx.db.reader() as session:
        bodies = list(
            await session.scalars(
                select(EmailMessage.body)
                .where(EmailMessage.to_address == address)
                .order_by(EmailMessage.id)
            )
        )
    assert len(bodies) == count, bodies
    found = re.search(r"https?://\S+" + re.escape(path) + r"\S*", bodies[-1])
    assert found is not None, bodies[-1]
    link = urlsplit(found.group(0))
    return f"{link.path}?{link.query}"


async def test_the_verification_link_confirms_the_address_once(
    page: Page, web: WebApp, steps: Steps
) -> None:
    email = unique_email("verify")
    async with steps("ask for the link"):
        await sign_up_in_browser(page, email)
        await call(page, "POST", "/v1/user/email/verification")
        link = await _mailed_link(web, email, "/email/verify")
    async with steps("open it and confirm"):
        await page.goto(link)
        await expect(page.get_by_role("heading", name="Confirm your email address")).to_be_visible()
        await page.get_by_role("button", name="Confirm my address").click()
        await expect(page.locator("#verify-message")).to_have_text(
            f"{email} is confirmed as your address."
        )
        assert (await call(page, "GET", "/v1/user/email"))["verified"] is True
    async with steps("the link works once"):
        await page.goto(link)
        await page.get_by_role("button", name="Confirm my address").click()
        await expect(page.locator("#verify-error")).to_contain_text(
            "invalid, already used or expired"
        )
    async with steps("a page without a token says so"):
        await page.goto("/email/verify")
        await expect(page.get_by_role("alert")).to_contain_text("needs the link from the mail")


async def test_the_reset_link_opens_a_form_with_plain_errors(
    browser: Browser, page: Page, web: WebApp, steps: Steps
) -> None:
    email = unique_email("reset")
    async with steps("sign up, sign out, ask for a reset from the login page"):
        await sign_up_in_browser(page, email, "first-pass-word")
        anonymous = await new_context(browser, web)
        visitor = await anonymous.new_page()
        await visitor.goto("/login")
        await visitor.get_by_role("link", name="Forgot your password?").click()
        await visitor.wait_for_url("**/password/forgot")  # its module is loaded by then
        await visitor.fill("#forgot-email", email)
        await visitor.get_by_role("button", name="Mail me a reset link").click()
        await expect(visitor.locator("#forgot-done")).to_be_visible()
        link = await _mailed_link(web, email, "/password/reset")
    async with steps("the form says what is wrong"):
        await visitor.goto(link)
        await visitor.fill("#new-password", "short")
        await visitor.fill("#repeat-password", "short")
        await visitor.get_by_role("button", name="Set the new password").click()
        await expect(visitor.locator("#reset-error")).to_have_text(
            "The password needs at least 8 characters."
        )
        await visitor.fill("#new-password", "long-enough-one")
        await visitor.fill("#repeat-password", "long-enough-two")
        await visitor.get_by_role("button", name="Set the new password").click()
        await expect(visitor.locator("#reset-error")).to_have_text("The two passwords differ.")
        await visitor.fill("#new-password", "password123")
        await visitor.fill("#repeat-password", "password123")
        await visitor.get_by_role("button", name="Set the new password").click()
        await expect(visitor.locator("#reset-error")).to_contain_text("too easy to guess")
    async with steps("a good password is set and signs in"):
        await visitor.fill("#new-password", "brand-new-pass-7")
        await visitor.fill("#repeat-password", "brand-new-pass-7")
        await visitor.get_by_role("button", name="Set the new password").click()
        await expect(visitor.locator("#reset-done")).to_be_visible()
        await visitor.get_by_role("link", name="Sign in").last.click()
        await visitor.wait_for_url("**/login")
        await visitor.fill("#email", email)
        await visitor.fill("#password", "brand-new-pass-7")
        await visitor.click("#auth-form button[type=submit]")
        await visitor.wait_for_url("**/app")
    async with steps("the link is used up"):
        await visitor.goto(link)
        await visitor.fill("#new-password", "another-pass-8")
        await visitor.fill("#repeat-password", "another-pass-8")
        await visitor.get_by_role("button", name="Set the new password").click()
        await expect(visitor.locator("#reset-error")).to_contain_text("invalid, already used")
        await anonymous.close()


async def test_changing_the_address_from_the_profile_page(
    page: Page, web: WebApp, steps: Steps
) -> None:
    old, new = unique_email("old-address"), unique_email("new-address")
    async with steps("the profile shows the address"):
        await sign_up_in_browser(page, old)
        await page.goto("/app/profile")
        await expect(page.locator("#email-current")).to_have_text(f"Now {old} (not confirmed yet).")
    async with steps("a wrong password is said in the form, and nothing is sent"):
        await page.fill("#new_email", new)
        await page.fill("#email-password", "not-my-password")
        await page.click("#email-form button[type=submit]")
        await expect(page.locator("#email-form .form-error")).to_contain_text("password")
        await expect(page).to_have_url(re.compile(r"/app/profile$"))  # still signed in
    async with steps("the right password sends the link to the new address"):
        await page.fill("#email-password", "s3cret-pass")
        await page.click("#email-form button[type=submit]")
        await expect(page.get_by_text(f"We sent a link to {new}")).to_be_visible()
        link = await _mailed_link(web, new, "/email/verify")
        await page.reload()
        await expect(page.locator("#email-current")).to_contain_text(f"Now {old}")  # not yet
    async with steps("opening the link moves the account"):
        await page.goto(link)
        await page.get_by_role("button", name="Confirm my address").click()
        await expect(page.locator("#verify-message")).to_have_text(
            f"{new} is confirmed as your address."
        )
        await page.goto("/app/profile")
        await expect(page.locator("#email-current")).to_have_text(f"Now {new} (confirmed).")
