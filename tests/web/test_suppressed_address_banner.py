"""The suppressed-address banner in headless Chromium (docs/email.md, "The suppression list"):
the email provider reports a hard bounce of the user's address through its signed webhook, the
inbox then says mail to the address stopped and links to where it is changed, and once the
account has moved to a new address (the mailed link opened) the banner is gone."""

import time
from datetime import UTC, datetime
from typing import Any

import httpx
import orjson
from playwright.async_api import Page, expect
from standardwebhooks.webhooks import Webhook

from tests.conftest import unique_email
from tests.web.conftest import RESEND_SECRET, Steps, WebApp, call, expect_toast, sign_up_in_browser
from tests.web.test_mailed_link_pages import _mailed_link


async def _provider_reports(web: WebApp, event: dict[str, Any], event_id: str) -> None:
    """POST the event to the email webhook as Resend does: Svix-signed, over HTTP."""
    body = orjson.dumps(event)
    when = datetime.now(tz=UTC)
    headers = {
        "svix-id": event_id,
        "svix-timestamp": str(int(when.timestamp())),
        "svix-signature": Webhook(RESEND_SECRET).sign(event_id, when, body.decode()),
        "content-type": "application/json",
    }
    async with httpx.AsyncClient(base_url=web.url, timeout=30) as provider:
        answer = await provider.post("/v1/webhook/email/resend", content=body, headers=headers)
    assert answer.status_code == 200 and answer.json()["duplicate"] is False, answer.text


async def _until_suppressed(page: Page) -> None:
    """The event is processed in the background: wait (generously) until the API says so."""
    deadline = time.monotonic() + 30
    while not (await call(page, "GET", "/v1/user/email"))["suppressed"]:
        assert time.monotonic() < deadline, "the bounce did not suppress the address"
        await page.wait_for_timeout(100)


async def test_a_bounced_address_shows_a_banner_until_the_address_is_changed(
    page: Page, web: WebApp, steps: Steps
) -> None:
    email, new_email = unique_email("bounced"), unique_email("fixed")
    banner = page.locator("#email-banner")
    async with steps("a signed-in user; no banner while mail to the address works"):
        await sign_up_in_browser(page, email)
        await page.goto("/app/inbox")
        await expect(page.locator("#email-address")).to_contain_text(email)
        await expect(banner).to_be_hidden()

    async with steps("the provider reports a hard bounce of the address"):
        bounce = {
            "type": "email.bounced",
            "created_at": datetime.now(tz=UTC).isoformat(),
            "data": {"email_id": "e-1", "to": [email], "bounce": {"type": "Permanent"}},
        }
        await _provider_reports(web, bounce, f"msg_{email}")
        await _until_suppressed(page)

    async with steps("the inbox says mail stopped and where to fix it"):
        await page.goto("/app/inbox")
        await expect(banner).to_be_visible()
        await expect(banner).to_have_text(
            f"Mail to {email} could not be delivered (the receiving mail server refused it): "
            "only account mail is sent to it. Change your address to get notifications by "
            "email again."
        )
        await banner.get_by_role("link", name="Change your address").click()
        await expect(page).to_have_url(f"{web.url}/app/profile#email-title")
        await expect(page.locator("#email-current")).to_contain_text(
            "could not be delivered (the receiving mail server refused it)"
        )

    async with steps("change the address; the link mailed to the new one moves the account"):
        await page.fill("#new_email", new_email)
        await page.fill("#email-password", "s3cret-pass")
        await page.get_by_role("button", name="Send the link").click()
        await expect_toast(page, f"We sent a link to {new_email}")
        await page.goto(await _mailed_link(web, new_email, "/email/verify"))
        await page.get_by_role("button", name="Confirm my address").click()
        await expect(page.locator("#verify-message")).to_have_text(
            f"{new_email} is confirmed as your address."
        )

    async with steps("the banner is gone: mail to the new address works"):
        await page.goto("/app/inbox")
        await expect(page.locator("#email-address")).to_have_text(f"{new_email} (confirmed)")
        await expect(banner).to_be_hidden()
        assert (await call(page, "GET", "/v1/user/email"))["suppressed"] is False
