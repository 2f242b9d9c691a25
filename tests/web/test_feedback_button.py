"""The Feedback button in headless Chromium: only signed-in pages have it, its dialog works from
the keyboard (Escape closes it), an empty message is refused in words, a sent message arrives
with the page it came from, the app version and its screenshot, and a refused screenshot is
said in words (docs/feedback.md)."""

import io

from PIL import Image
from playwright.async_api import Page, expect

from papertrade import __version__
from tests.conftest import unique_email
from tests.web.conftest import Steps, WebApp, call, expect_toast, sign_up_in_browser
from tests.web.test_content_security_policy import RECORD_VIOLATIONS

IDEA = "Show the funding rate\nnext to the price."


def png(size: tuple[int, int] = (640, 400)) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, (200, 30, 30)).save(out, format="PNG")
    return out.getvalue()


async def test_feedback_from_a_page_arrives_with_its_path_and_version(
    page: Page, web: WebApp, steps: Steps
) -> None:
    await page.context.add_init_script(RECORD_VIOLATIONS)
    dialog = page.get_by_role("dialog", name="Send feedback")
    async with steps("signed out there is no button"):
        await page.goto("/markets")
        await expect(page.get_by_role("link", name="Sign in")).to_be_visible()
        await expect(page.locator("#feedback-open")).to_have_count(0)
    async with steps("open the dialog from the keyboard and close it with Escape"):
        await sign_up_in_browser(page, unique_email("feedback"))
        await page.goto("/app/settings/api-keys")
        opener = page.get_by_role("button", name="Feedback")
        await opener.focus()
        await page.keyboard.press("Enter")
        await expect(dialog).to_be_visible()
        await expect(page.get_by_label("Your message")).to_be_focused()
        await page.keyboard.press("Escape")
        await expect(dialog).to_be_hidden()
        await expect(opener).to_be_focused()
    async with steps("an empty message is refused in words"):
        await opener.click()
        await page.get_by_label("Your message").fill("   ")
        await dialog.get_by_role("button", name="Send").click()
        await expect(dialog.locator(".form-error")).to_have_text("Write a message before sending.")
        await expect(page.get_by_label("Your message")).to_have_attribute("aria-invalid", "true")
        assert await call(page, "GET", "/v1/feedback") == []
    async with steps("send an idea with a screenshot"):
        await page.get_by_label("What is it about?").select_option(label="An idea")
        await page.get_by_label("Your message").fill(IDEA)
        await page.get_by_label("Screenshot").set_input_files(
            {"name": "shot.png", "mimeType": "image/png", "buffer": png()}
        )
        await dialog.get_by_role("button", name="Send").click()
        await expect_toast(
            page, "Thank you, your feedback was sent. Our answer will arrive in your Inbox."
        )
        await expect(dialog).to_be_hidden()
    async with steps("it arrived with the page, the version and the screenshot"):
        mine = await call(page, "GET", "/v1/feedback")
        assert [(f["category"], f["text"], f["page"], f["app_version"]) for f in mine] == [
            ("idea", IDEA, "/app/settings/api-keys", __version__)
        ]
        assert mine[0]["screenshot"] == {"width": 640, "height": 400}
    async with steps("a refused screenshot is said in words; the message is not lost"):
        await page.goto("/app/inbox")
        await page.get_by_role("button", name="Feedback").click()
        await page.get_by_label("Your message").fill("The bell is late.")
        await page.get_by_label("Screenshot").set_input_files(
            {"name": "evil.png", "mimeType": "image/png", "buffer": b"<script>alert(1)</script>"}
        )
        await dialog.get_by_role("button", name="Send").click()
        await expect_toast(page, "Your feedback was sent, but the screenshot was not attached:")
        newest = (await call(page, "GET", "/v1/feedback"))[0]
        assert (newest["page"], newest["screenshot"]) == ("/app/inbox", None)
        assert await page.evaluate("window.cspViolations") == []
