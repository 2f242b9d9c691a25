"""Pages answer with the status a browser, a crawler or a link checker expects (issue 33,
point 13): an unknown public portfolio or strategy is a 404 with the friendly page, and HEAD
answers as GET without a body."""

import httpx
from playwright.async_api import Page, expect

from tests.conftest import unique_email
from tests.web.conftest import Steps, WebApp, call, sign_up_in_browser
from tests.web.test_strategies import FIXED


async def test_unknown_codes_are_404_with_the_friendly_page(
    page: Page, web: WebApp, steps: Steps
) -> None:
    async with steps("a portfolio code that names nothing: 404, and a way on"):
        response = await page.goto("/p/P9999998")
        assert response is not None and response.status == 404
        await expect(page.locator("#not-found h1")).to_have_text("Not found")
        await expect(page.locator("#not-found")).to_contain_text("No public portfolio")
        await page.get_by_role("link", name="Browse public portfolios").click()
        await page.wait_for_url("**/square")

    async with steps("a strategy code that names nothing: 404"):
        response = await page.goto("/s/S9999998")
        assert response is not None and response.status == 404
        await expect(page.locator("#not-found")).to_contain_text("No public strategy")

    async with steps("a private portfolio's code is a 404 for others, a public one is 200"):
        await sign_up_in_browser(page, unique_email("status"))
        made = await call(page, "POST", "/v1/portfolios", {"name": "Quiet"})
        response = await page.goto(f"/p/{made['code']}")
        assert response is not None and response.status == 404
        await call(page, "PATCH", f"/v1/portfolios/{made['id']}", {"visibility": "public"})
        response = await page.goto(f"/p/{made['code']}")
        assert response is not None and response.status == 200
        await expect(page.locator("#pub-name")).to_have_text("Quiet")

    async with steps("the owner reads their private strategy; others get a 404"):
        body = {"kind": "dsl", "name": "Mine", "source": FIXED, "visibility": "private"}
        strategy = await call(page, "POST", "/v1/strategies", body)
        response = await page.goto(f"/s/{strategy['code']}")
        assert response is not None and response.status == 200


async def test_head_answers_like_get_without_a_body(web: WebApp) -> None:
    async with httpx.AsyncClient(base_url=web.url) as client:
        for path in ["/", "/square", "/markets", "/login", "/static/app/app.css"]:
            got = await client.get(path)
            head = await client.head(path)
            assert head.status_code == got.status_code == 200, path
            assert head.content == b"", path
            assert head.headers["content-type"] == got.headers["content-type"], path
        assert (await client.head("/p/P9999998")).status_code == 404
        assert (await client.head("/app/inbox")).status_code == 303  # signed out: to sign in
