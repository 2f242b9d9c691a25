"""Text contrast on the portfolio page meets WCAG AA (issue 21 item 11): the ratio is computed
from the colours the browser really uses (getComputedStyle), each translucent background blended
over what lies under it, as a reader's eye sees it."""

from playwright.async_api import Page, expect

from tests.conftest import unique_email
from tests.web.conftest import Steps, WebApp, call, sign_up_in_browser

AA_NORMAL_TEXT = 4.5

# WCAG 2.x relative luminance and contrast ratio; a background is the stack of the element's and
# its ancestors' background colours, each blended over the ones beneath (the page's canvas last).
CONTRAST = """(element) => {
    const parse = (text) => {
        const [r, g, b, a = 1] = text.match(/[\\d.]+/g).map(Number);
        return [r, g, b, a];
    };
    const over = ([r, g, b, a], [R, G, B]) =>
        [r * a + R * (1 - a), g * a + G * (1 - a), b * a + B * (1 - a), 1];
    const layers = [];
    for (let node = element; node; node = node.parentElement) {
        layers.push(parse(getComputedStyle(node).backgroundColor));
    }
    let background = [255, 255, 255, 1];
    for (const layer of layers.reverse()) background = over(layer, background);
    const text = over(parse(getComputedStyle(element).color), background);
    const luminance = ([r, g, b]) => {
        const [R, G, B] = [r, g, b].map((v) => {
            const c = v / 255;
            return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
        });
        return 0.2126 * R + 0.7152 * G + 0.0722 * B;
    };
    const [light, dark] = [luminance(text), luminance(background)].sort((x, y) => y - x);
    return (light + 0.05) / (dark + 0.05);
}"""


async def ratio(page: Page, selector: str) -> float:
    return float(await page.locator(selector).first.evaluate(CONTRAST))


async def test_buttons_and_text_on_the_portfolio_page_reach_aa_contrast(
    page: Page, web: WebApp, steps: Steps
) -> None:
    async with steps("a portfolio page"):
        await sign_up_in_browser(page, unique_email("contrast"))
        made = await call(page, "POST", "/v1/portfolios", {"name": "Contrast"})
        await page.goto(f"/app/portfolios/{made['id']}")
        await expect(page.locator("#t-symbol")).not_to_have_value("")

    ratios: dict[str, float] = {}
    async with steps("measure the buy side, the primary button and the text"):
        await expect(page.locator("#t-submit")).to_have_class("btn btn-block btn-buy")
        ratios["Buy button"] = await ratio(page, "#t-submit")
        ratios["Buy side, chosen"] = await ratio(page, 'label[for="t-buy"]')
        ratios["primary button"] = await ratio(page, "#compat-form .btn-primary")
        ratios["body text"] = await ratio(page, "#account-panel h3")
        ratios["muted text on a card"] = await ratio(page, "#keys-panel p.muted")
        ratios["muted text on the page"] = await ratio(page, "#pf-realism")
        # The hovered primary button is read as much as the resting one.
        await page.hover("#compat-form .btn-primary")
        ratios["primary button, hovered"] = await ratio(page, "#compat-form .btn-primary")
        await page.focus(".skip-link")
        ratios["skip link, focused"] = await ratio(page, ".skip-link")

    async with steps("measure the sell side"):
        await page.click('label[for="t-sell"]')
        await expect(page.locator("#t-submit")).to_have_class("btn btn-block btn-sell")
        ratios["Sell button"] = await ratio(page, "#t-submit")
        ratios["Sell side, chosen"] = await ratio(page, 'label[for="t-sell"]')

    failing = {name: round(value, 2) for name, value in ratios.items() if value < AA_NORMAL_TEXT}
    assert not failing, f"below {AA_NORMAL_TEXT}:1 (all: {ratios})"
