"""The account pages in headless Chromium: profile (about you, avatar with a preview, password,
deleting the account), the public profile, invitations (copy a link that pre-fills sign-up) and
the waitlist (join, the double opt-in landing, the place in line)."""

import asyncio
import io

import orjson
from PIL import Image
from playwright.async_api import Page, expect
from sqlalchemy import select

from papertrade.models import OutboxEvent
from tests.conftest import unique_email
from tests.web.conftest import WebApp, call, expect_toast, new_context, sign_up_in_browser


def png(size: tuple[int, int] = (300, 200)) -> bytes:
    image = Image.new("RGB", size, (30, 140, 60))
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()


async def image_width(page: Page, selector: str, width: int) -> None:
    """Wait until the image has loaded at `width` pixels (polled: the page's CSP forbids the
    string evaluation wait_for_function uses)."""
    deadline = asyncio.get_running_loop().time() + 10
    while True:
        found = await page.locator(selector).evaluate(
            "(img) => (img.complete ? img.naturalWidth : 0)"
        )
        if found == width:
            return
        assert asyncio.get_running_loop().time() < deadline, f"{selector} is {found} wide"
        await asyncio.sleep(0.05)


async def test_profile_avatar_password_public_page_and_deletion(page: Page, web: WebApp) -> None:
    await sign_up_in_browser(page, unique_email("profile"))
    made = await call(page, "POST", "/v1/portfolios", {"name": "Shown", "visibility": "public"})
    await page.goto("/app/profile")
    await page.fill("#display_name", "Ada Trader")
    await page.fill("#bio", "Trend follower.")
    await page.fill("#time_zone", "Europe/Berlin")
    await page.click("#profile-form button[type=submit]")
    await expect_toast(page, "Profile saved")
    await page.reload()
    await expect(page.locator("#display_name")).to_have_value("Ada Trader")
    await expect(page.locator("#time_zone")).to_have_value("Europe/Berlin")

    await page.fill("#time_zone", "Mars/Olympus")  # the API's own refusal shows in the form
    await page.click("#profile-form button[type=submit]")
    await expect(page.locator("#profile-form .form-error")).not_to_be_empty()

    await page.set_input_files(
        "#avatar-file", {"name": "me.png", "mimeType": "image/png", "buffer": png()}
    )
    await expect(page.locator("#avatar-preview")).to_be_visible()
    await image_width(page, "#avatar-preview", 300)
    await page.click("#avatar-form button[type=submit]")
    await expect_toast(page, "Avatar updated")
    await image_width(page, "#avatar-current", 256)  # re-encoded to 256×256
    await page.set_input_files(
        "#avatar-file",
        {"name": "evil.png", "mimeType": "image/png", "buffer": b"<script>alert(1)</script>"},
    )
    await page.click("#avatar-form button[type=submit]")
    await expect(page.locator("#avatar-form .form-error")).to_contain_text("image")

    await page.fill("#current_password", "wrong-password")
    await page.fill("#new_password", "an0ther-fine-pass")
    await page.click("#password-form button[type=submit]")
    await expect(page.locator("#password-form .form-error")).not_to_be_empty()
    await page.fill("#current_password", "s3cret-pass")
    await page.fill("#new_password", "an0ther-fine-pass")
    await page.click("#password-form button[type=submit]")
    await expect_toast(page, "Password changed")

    public = page.locator("#public-link")
    href = await public.get_attribute("href")
    assert href is not None and href.startswith("/u/")
    await public.click()
    await expect(page.locator("#pp-name")).to_have_text("Ada Trader")
    await expect(page.locator("#pp-bio")).to_have_text("Trend follower.")
    await expect(page.locator("#pp-portfolios")).to_contain_text(made["code"])
    await page.click("#pp-portfolios a >> text=Shown")
    await page.wait_for_url(f"**/p/{made['code']}")

    await page.goto("/app/profile")
    await expect(page.locator("#delete-consequences")).to_contain_text("forfeited")
    await expect(page.locator("#delete-consequences")).to_contain_text("Your subscriptions end")
    await expect(page.locator("#delete-consequences")).to_contain_text("comments are removed")
    await page.fill("#delete-password", "an0ther-fine-pass")
    await page.click("#delete-form button[type=submit]")
    await page.click("dialog >> text=Delete my account")
    await page.wait_for_url("**/?deleted=1")
    await page.goto(href)
    await expect(page.locator("#pp-missing")).to_be_visible()
    await page.goto("/u/99999999999999999999")
    await expect(page.locator("h1")).to_contain_text("Not found")


async def test_invitation_links_prefill_sign_up(page: Page, web: WebApp) -> None:
    await sign_up_in_browser(page, unique_email("inviter"))
    await page.goto("/app/invitations")
    rows = page.locator("#invite-codes tbody tr")
    await expect(rows).to_have_count(3)
    await expect(rows.first).to_contain_text("0 / 1")
    await expect(rows.first).to_contain_text("live")
    code = (await rows.first.locator("code").inner_text()).strip()
    await rows.first.locator("button", has_text="Copy link").click()
    copied = await page.evaluate("navigator.clipboard.readText()")
    assert copied == f"{web.url}/signup?code={code}"

    context = await new_context(page.context.browser, web)  # type: ignore[arg-type]
    try:
        guest = await context.new_page()
        await guest.goto(copied)
        await expect(guest.locator("#invite-code")).to_have_value(code)
    finally:
        await context.close()


async def test_waitlist_join_confirm_and_place(page: Page, web: WebApp) -> None:
    email = unique_email("waiter")
    await page.goto("/waitlist?ref=ZZZZ2222")
    await expect(page.locator("#wl-ref")).to_have_value("ZZZZ2222")
    await page.fill("#wl-ref", "")
    await page.fill("#wl-email", email)
    await page.click("#waitlist-form button[type=submit]")
    await expect(page.locator("#waitlist-sent")).to_contain_text("Check your inbox")

    async with web.app.state.ctx.db.reader() as session:
        events = await session.scalars(
            select(OutboxEvent).where(OutboxEvent.type == "waitlist.joined")
        )
        tokens = [
            orjson.loads(e.data)["verify_token"]
            for e in events
            if orjson.loads(e.data)["email"] == email
        ]
    assert tokens
    await page.goto("/waitlist/verify?token=not-a-token")
    await expect(page.locator("#waitlist-title")).to_have_text("This link does not work")
    await page.goto(f"/waitlist/verify?token={tokens[-1]}")
    await expect(page.locator("#waitlist-title")).to_have_text("Your place is confirmed")
    position = await page.locator("#wl-position").inner_text()
    assert position.isdigit() and int(position) >= 1
    link = await page.input_value("#wl-link")
    assert link.startswith(f"{web.url}/waitlist?ref=")
    await page.click("#wl-bookmark")
    await expect(page.locator("#wl-position")).to_have_text(position)
    await expect(page.locator("#wl-state")).to_contain_text("Confirmed")
