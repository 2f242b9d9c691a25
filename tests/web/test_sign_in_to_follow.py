"""A signed-out visitor who wants to follow a public portfolio or strategy, in headless Chromium:
the sign-in page says why they are there ("Sign in to follow this portfolio."), and signing in
(or signing up) brings them back to the page they came from, where the button now works. A
`next` that leads off the site (`//evil.example`, `https://evil.example`) is ignored."""

import asyncio
import re
from typing import Any
from urllib.parse import urlencode, urlsplit

from playwright.async_api import Browser, Page, Route, expect

from tests.conftest import unique_email
from tests.web.conftest import Steps, WebApp, call, new_context, sign_up_in_browser
from tests.web.test_strategies import FIXED

PASSWORD = "s3cret-pass"


async def _made_by_someone_else(
    browser: Browser, web: WebApp, path: str, body: dict[str, Any], comment: str | None = None
) -> dict[str, Any]:
    """A public portfolio or strategy of another user, made through the API; with `comment`,
    its author starts the portfolio's thread."""
    context = await new_context(browser, web)
    try:
        author = await context.new_page()
        await sign_up_in_browser(author, unique_email("author"))
        made: dict[str, Any] = await call(author, "POST", path, body)
        if comment is not None:
            thread = {"portfolio_id": made["id"], "text": comment}
            await call(author, "POST", "/v1/comments", thread)
        return made
    finally:
        await context.close()


async def _public_portfolio_and_visitor(
    browser: Browser, web: WebApp, name: str, comment: str | None = None
) -> tuple[dict[str, Any], str]:
    """Another user's public portfolio, and the email of a visitor's account, signed out."""
    body = {"name": name, "visibility": "public"}
    portfolio = await _made_by_someone_else(browser, web, "/v1/portfolios", body, comment)
    return portfolio, await _account(browser, web)


async def _account(browser: Browser, web: WebApp) -> str:
    """An account that exists, signed out (its session was in a context now closed)."""
    email = unique_email("visitor")
    context = await new_context(browser, web)
    try:
        await sign_up_in_browser(await context.new_page(), email, PASSWORD)
    finally:
        await context.close()
    return email


async def _sign_in(page: Page, email: str) -> None:
    await page.fill("#email", email)
    await page.fill("#password", PASSWORD)
    await page.click("#auth-form button[type=submit]")


async def test_sign_in_to_subscribe_says_why_and_comes_back_to_the_portfolio(
    page: Page, browser: Browser, web: WebApp, steps: Steps
) -> None:
    async with steps("a public portfolio and a visitor with an account, signed out"):
        portfolio, email = await _public_portfolio_and_visitor(browser, web, "Followable")
        public_path = f"/p/{portfolio['code']}"

    async with steps("signed out, the portfolio offers a way to sign in instead of Subscribe"):
        await page.goto(public_path)
        sign_in = page.get_by_role("link", name="Sign in to subscribe")
        await expect(sign_in).to_be_visible()
        await expect(page.locator("#subscribe-free")).to_be_hidden()
        await sign_in.click()

    async with steps("the sign-in page says why, not the generic notice"):
        await expect(page).to_have_url(re.compile(r"/login\?next="))
        await expect(page.locator("#auth-reason")).to_have_text("Sign in to follow this portfolio.")
        await expect(page.locator("#auth-refused")).to_have_count(0)

    async with steps("signing in returns to the portfolio, where Subscribe works"):
        await _sign_in(page, email)
        await page.wait_for_url(f"{web.url}{public_path}")
        await expect(page.locator("#follow-sign-in")).to_be_hidden()
        await page.get_by_role("button", name="Subscribe (free)").click()
        await expect(page.locator("#subscribe-note")).to_have_text(
            "Subscribed: its closed trades reach your inbox."
        )
        await expect(page.locator("#my-subscription")).to_have_text("You follow it (free).")
        mine = await call(page, "GET", "/v1/subscriptions/my")
        assert [(s["portfolio_id"], s["status"]) for s in mine] == [(portfolio["id"], "active")]


async def test_sign_up_to_follow_a_strategy_says_why_and_comes_back_to_it(
    page: Page, browser: Browser, web: WebApp, steps: Steps
) -> None:
    async with steps("a public strategy, a signed-out visitor without an account"):
        strategy = await _made_by_someone_else(
            browser,
            web,
            "/v1/strategies",
            {"kind": "dsl", "name": "Worth following", "source": FIXED, "visibility": "public"},
        )
        public_path = f"/s/{strategy['code']}"
        await page.goto(public_path)
        await expect(page.locator("#ps-title")).to_have_text("Worth following")
        await expect(page.locator("#ps-follow")).to_be_hidden()

    async with steps("Sign in to follow signals: the sign-in page says why"):
        await page.get_by_role("link", name="Sign in to follow signals").click()
        await expect(page).to_have_url(re.compile(r"/login\?next="))
        await expect(page.locator("#auth-reason")).to_have_text(
            "Sign in to follow this strategy's signals."
        )

    async with steps("new here: the sign-up page says why too"):
        await page.get_by_role("link", name="Create an account").click()
        await expect(page).to_have_url(re.compile(r"/signup\?next="))
        await expect(page.locator("#auth-reason")).to_have_text(
            "Create an account to follow this strategy's signals."
        )

    async with steps("creating the account returns to the strategy, where Follow works"):
        await page.fill("#email", unique_email("newfan"))
        await page.fill("#password", PASSWORD)
        await page.click("#auth-form button[type=submit]")
        await page.wait_for_url(f"{web.url}{public_path}")
        await expect(page.locator("#ps-follow-sign-in")).to_be_hidden()
        await page.get_by_role("button", name="Follow signals", exact=True).click()
        await expect(page.locator("#ps-follow-state")).to_have_text(
            "You get its signals in your inbox."
        )


async def test_a_next_that_leaves_the_site_is_ignored(browser: Browser, web: WebApp) -> None:
    email = await _account(browser, web)
    for evil in ("//evil.example", "https://evil.example", "/\\evil.example"):
        context = await new_context(browser, web)
        page = await context.new_page()
        steps = Steps(page, f"test_a_next_that_leaves_the_site_is_ignored-{evil}")
        try:
            query = urlencode({"next": evil, "reason": "follow-portfolio"})
            async with steps(f"signing in with next={evil} lands on the dashboard"):
                await page.goto(f"/login?{query}")
                await expect(page.locator("#auth-reason")).to_have_text(
                    "Sign in to follow this portfolio."
                )
                await expect(page.locator("#auth-form")).to_have_attribute("data-next", "/app")
                await _sign_in(page, email)
                await page.wait_for_url(f"{web.url}/app")
            async with steps(f"signed in, /login?next={evil} goes to the dashboard too"):
                await page.goto(f"/login?{query}")
                assert urlsplit(page.url).netloc == urlsplit(web.url).netloc, page.url
                assert urlsplit(page.url).path == "/app", page.url
        finally:
            await context.close()


async def test_signed_out_visitor_reads_the_comments_and_signs_in_to_comment(
    page: Page, browser: Browser, web: WebApp, steps: Steps
) -> None:
    async with steps("a public portfolio whose author started a thread; a signed-out visitor"):
        portfolio, email = await _public_portfolio_and_visitor(
            browser, web, "Talkative", comment="Ask me <anything>"
        )
        public_path = f"/p/{portfolio['code']}"

    async with steps("signed out, the thread reads as written; a link to sign in, no form"):
        await page.goto(public_path)
        await expect(page.locator("#comment-list .comment .pre-wrap")).to_have_text(
            "Ask me <anything>"
        )
        await expect(page.locator("#comment-form")).to_be_hidden()
        await expect(
            page.locator("#comment-list").get_by_role("button", name="Reply")
        ).to_have_count(0)
        await page.get_by_role("link", name="Sign in to comment").click()

    async with steps("the sign-in page says why, and signing in comes back to the thread"):
        await expect(page.locator("#auth-reason")).to_have_text("Sign in to join the discussion.")
        await _sign_in(page, email)
        await page.wait_for_url(f"{web.url}{public_path}")
        await expect(page.get_by_role("link", name="Sign in to comment")).to_be_hidden()
        await page.fill("#comment-text", "What is your stop?")
        await page.click("#comment-form button[type=submit]")
        await expect(page.locator("#comment-list > .comment > .pre-wrap")).to_have_text(
            ["What is your stop?", "Ask me <anything>"]
        )


async def test_copy_this_portfolio_signed_out_says_why_and_the_page_does_not_jump(
    page: Page, browser: Browser, web: WebApp, steps: Steps
) -> None:
    async with steps("a public portfolio; its copy-trading card answers late"):
        portfolio, email = await _public_portfolio_and_visitor(browser, web, "Copyable")

        async def late(route: Route) -> None:
            await asyncio.sleep(0.8)
            await route.continue_()

        await page.route("**/v1/copy/leaders/*", late)

    async with steps("the page shows its cards together: Subscribe's link does not move"):
        await page.goto(f"/p/{portfolio['code']}")
        sign_in = page.get_by_role("link", name="Sign in to subscribe")
        await expect(sign_in).to_be_visible()
        first = await sign_in.bounding_box()
        await expect(page.locator("#copy-card")).to_be_visible()  # the late card, above it
        assert await sign_in.bounding_box() == first

    async with steps("Copy this portfolio signed out: the sign-in page says why, then copies"):
        await page.get_by_role("link", name="Copy this portfolio").click()
        await expect(page.locator("#auth-reason")).to_have_text("Sign in to copy this portfolio.")
        await _sign_in(page, email)
        await page.wait_for_url(f"**/app/social?leader={portfolio['id']}")
        # the copy form names the leader by its code (issue 33: codes, not ids)
        await expect(page.locator("#follow-leader")).to_have_value(portfolio["code"])
