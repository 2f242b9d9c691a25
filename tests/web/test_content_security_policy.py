"""The pages and /docs work under their Content-Security-Policy in Chromium: nothing they need is
blocked, and the console shows no CSP error (issue 14 item 12)."""

from playwright.async_api import Browser, ConsoleMessage, Page, expect

from tests.conftest import unique_email
from tests.web.conftest import WebApp, new_context, sign_up_in_browser

# Every violation of the page's policy, as the page itself sees it.
RECORD_VIOLATIONS = """
window.cspViolations = [];
document.addEventListener('securitypolicyviolation', (e) => {
  window.cspViolations.push(`${e.violatedDirective} blocked ${e.blockedURI || 'inline'}`);
});
"""


async def _violations(page: Page) -> list[str]:
    found: list[str] = await page.evaluate("window.cspViolations")
    return found


async def test_pages_and_docs_load_without_csp_violations(browser: Browser, web: WebApp) -> None:
    context = await new_context(browser, web)
    await context.add_init_script(RECORD_VIOLATIONS)
    page = await context.new_page()
    console: list[str] = []

    def remember(message: ConsoleMessage) -> None:
        if "Content Security Policy" in message.text or "Refused to" in message.text:
            console.append(message.text)

    page.on("console", remember)
    try:
        answer = await page.goto("/docs")
        assert answer is not None
        assert "frame-ancestors 'none'" in answer.headers["content-security-policy"]
        await expect(page.locator(".swagger-ui .info .title")).to_contain_text("Papertrade")
        await expect(page.locator(".opblock").first).to_be_visible()
        await page.locator(".opblock-summary").first.click()  # an operation opens
        await expect(page.locator(".opblock-body").first).to_be_visible()
        assert await _violations(page) == []

        for path in ["/", "/login", "/markets", "/markets/BTCUSDT", "/square"]:
            await page.goto(path)
            await page.wait_for_load_state("networkidle")
            assert await _violations(page) == [], path

        await sign_up_in_browser(page, unique_email("csp"))
        assert await _violations(page) == []
        await page.fill("#pf-name", "CSP")
        await page.keyboard.press("Enter")
        await page.wait_for_url("**/app/portfolios/*")
        await page.wait_for_load_state("networkidle")
        assert await _violations(page) == []
        assert console == []
    finally:
        await context.close()
