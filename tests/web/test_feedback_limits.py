"""The feedback dialog's limits in headless Chromium (docs/feedback.md): a screenshot over 2 MiB
is refused in the dialog, in words, and nothing is sent; when the hourly limit is reached
(429 from POST /v1/feedback) the dialog says when sending works again and keeps the message,
and the rest of the page goes on reading."""

import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from playwright.async_api import Browser, Page, Request, expect

from papertrade.notifications import service
from papertrade.notifications.kinds import Message
from tests.conftest import unique_email
from tests.foundation.helpers import hold_the_window
from tests.web.conftest import (
    Steps,
    WebApp,
    call,
    expect_toast,
    own_web,
    page_on,
    sign_up_in_browser,
)
from tests.web.test_feedback_button import png

THREE_MIB = 3 * 1024 * 1024
TOO_LARGE = (
    "The screenshot may be at most 2 MiB (2,048 KiB); this one is 3,073 KiB. "
    "Choose a smaller one, or send without it."
)


def _feedback_posts(page: Page) -> list[str]:
    """Every request the page makes to /v1/feedback (the message or its screenshot)."""
    seen: list[str] = []

    def note(request: Request) -> None:
        if "/v1/feedback" in request.url and request.method != "GET":
            seen.append(f"{request.method} {request.url}")

    page.on("request", note)
    return seen


async def test_a_screenshot_over_2_mib_is_refused_and_nothing_is_sent(
    page: Page, web: WebApp, steps: Steps
) -> None:
    dialog = page.get_by_role("dialog", name="Send feedback")
    sent = _feedback_posts(page)
    async with steps("choosing a 3 MiB screenshot is refused at once"):
        await sign_up_in_browser(page, unique_email("bigshot"))
        await page.get_by_role("button", name="Feedback").click()
        await page.get_by_label("Your message").fill("The chart is blank.")
        big = png() + b"\0" * (THREE_MIB - len(png()) + 1)  # a PNG with 3 MiB + 1 byte
        await page.get_by_label("Screenshot").set_input_files(
            {"name": "huge.png", "mimeType": "image/png", "buffer": big}
        )
        await expect(dialog.locator(".form-error")).to_have_text(TOO_LARGE)
        await expect(page.get_by_label("Screenshot")).to_have_attribute("aria-invalid", "true")

    async with steps("Send is refused the same way: the dialog stays, nothing is sent"):
        await dialog.get_by_role("button", name="Send").click()
        await expect(dialog.locator(".form-error")).to_have_text(TOO_LARGE)
        await expect(dialog).to_be_visible()
        await expect(page.get_by_label("Your message")).to_have_value("The chart is blank.")
        assert await call(page, "GET", "/v1/feedback") == []
        assert sent == []

    async with steps("a screenshot within the limit goes"):
        await page.get_by_label("Screenshot").set_input_files(
            {"name": "shot.png", "mimeType": "image/png", "buffer": png()}
        )
        await expect(dialog.locator(".form-error")).to_have_text("")
        await dialog.get_by_role("button", name="Send").click()
        await expect_toast(page, "your feedback was sent")
        mine = await call(page, "GET", "/v1/feedback")
        assert [(f["text"], f["screenshot"]) for f in mine] == [
            ("The chart is blank.", {"width": 640, "height": 400})
        ]


@pytest.fixture
async def limited_web(tmp_path: Path) -> AsyncIterator[WebApp]:
    """An app where feedback is limited to one message an hour."""
    async with own_web("feedback_limit", tmp_path, rate_limit_feedback_per_hour=1) as served:
        yield served


@pytest.fixture
async def limited_page(
    browser: Browser, limited_web: WebApp, request: pytest.FixtureRequest
) -> AsyncIterator[Page]:
    async with page_on(browser, limited_web, request) as opened:
        yield opened


async def test_the_hourly_limit_says_when_to_retry_and_keeps_the_message(
    limited_page: Page, limited_web: WebApp, request: pytest.FixtureRequest
) -> None:
    page = limited_page
    steps = Steps(page, request.node.name)
    dialog = page.get_by_role("dialog", name="Send feedback")
    async with steps("a user who sent this hour's message already"):
        await sign_up_in_browser(page, unique_email("chatty"))
        await page.goto("/app/inbox")
        await expect(page.locator("#inbox-empty")).to_be_visible()
        hold_the_window()  # the limit counts per clock hour: both messages fall in one
        await call(page, "POST", "/v1/feedback", {"category": "bug", "text": "First."})

    async with steps("the next one: the dialog says when sending works again"):
        await page.get_by_role("button", name="Feedback").click()
        await page.get_by_label("Your message").fill("Second thought.")
        async with page.expect_response("**/v1/feedback") as answered:
            await dialog.get_by_role("button", name="Send").click()
        refused = await answered.value
        assert refused.status == 429
        retry_after = int(await refused.header_value("Retry-After") or 0)
        assert 0 < retry_after <= 3600
        wait = f"{retry_after} s" if retry_after < 60 else f"{-(-retry_after // 60)} min"
        await expect(dialog.locator(".form-error")).to_have_text(
            re.compile(
                r"^You have sent as many messages as an hour allows\. You can send again in "
                + re.escape(wait)
                + r" \(at \d\d:\d\d\); your message stays here until then\.$"
            )
        )
        await expect(dialog).to_be_visible()
        await expect(page.get_by_label("Your message")).to_have_value("Second thought.")
        assert [f["text"] for f in await call(page, "GET", "/v1/feedback")] == ["First."]

    async with steps("the page goes on reading: a new notification shows"):
        await page.get_by_role("button", name="Cancel").click()
        me = await call(page, "GET", "/v1/user")
        async with limited_web.app.state.ctx.transaction() as uow:
            await service.notify_many(uow, [me["id"]], "system", Message("Still here", ""))
        await page.get_by_label("Unread only").check()  # the list is read again
        await expect(page.locator("#inbox-list")).to_contain_text("Still here")
        await expect(page.locator("#toasts")).not_to_contain_text("Too many requests")
