"""The copying page in headless Chromium: start copying a public portfolio, see its fills
copied, pause, resume, unfollow (the settlement shows), cancel a subscription; and the comment
threads of public portfolio and strategy pages, text shown as written."""

import time

from playwright.async_api import Browser, Page, expect

from tests.conftest import unique_email
from tests.trading_api.helpers import set_price
from tests.wallet.credit import operator_credit
from tests.web.conftest import WebApp, call, new_context, sign_up_in_browser


async def test_copy_from_the_copying_page(page: Page, web: WebApp, browser: Browser) -> None:
    leader_context = await new_context(browser, web)
    leader = await leader_context.new_page()
    await sign_up_in_browser(leader, unique_email("leader"))
    led = await call(
        leader,
        "POST",
        "/v1/portfolios",
        {"name": "lead", "visibility": "public", "initial_balance": "10000"},
    )
    await sign_up_in_browser(page, unique_email("copier"))
    mine = await call(page, "POST", "/v1/portfolios", {"name": "copies"})
    await page.goto(f"/p/{led['code']}")  # the leader's public page
    await expect(page.locator("#copy-followers")).to_have_text("0")
    await expect(page.locator("#copy-share")).to_have_text("10 %")
    await page.click("#copy-link")
    await page.wait_for_url(f"**/app/social?leader={led['id']}")
    await expect(page.locator("#copies-empty")).to_be_visible()
    await expect(page.locator("#follow-leader")).to_have_value(led["code"])

    await page.select_option("#follow-portfolio", str(mine["id"]))
    await page.select_option("#follow-mode", "fixed_amount")
    await page.fill("#follow-size", "5")  # refused: allocation missing first
    await page.click("#follow-form button[type=submit]")
    await expect(page.locator("#follow-form .form-error")).not_to_be_empty()
    await page.fill("#follow-allocation", "1000")
    await page.click("#follow-form button[type=submit]")
    row = page.locator("#copies-table tbody tr").first
    await expect(row.locator(".copy-status")).to_have_text("active")

    await set_price(web.app, "BTCUSDT", "50000")
    buy = {"symbol": "BTCUSDT", "side": "buy", "type": "market", "quantity": "0.002"}
    await call(leader, "POST", "/v1/order", {"portfolio_id": led["id"], **buy})
    # 5 USDT of margin at the leader's 20x is 100 USDT of BTC at 50,000: 0.002 BTC.
    relation = (await call(page, "GET", "/v1/copy/relations"))[0]
    deadline = time.monotonic() + 30  # the copy is made in the background
    while not (trades := await call(page, "GET", f"/v1/copy/relations/{relation['id']}/trades")):
        assert time.monotonic() < deadline, "the leader's order was not copied"
        await page.wait_for_timeout(50)
    assert trades[0]["status"] == "copied" and trades[0]["quantity"] == 0.002

    await row.locator("text=Pause").click()
    await expect(row.locator(".copy-status")).to_have_text("paused")
    await row.locator("text=Resume").click()
    await expect(row.locator(".copy-status")).to_have_text("active")
    await row.locator("text=Unfollow").click()
    await page.locator("dialog button[value=ok]").click()
    await expect(row.locator(".copy-status")).to_have_text("ended")
    settlement = page.locator("#shares-table tbody tr").first
    await expect(settlement).to_contain_text("unfollow")

    await page.goto(f"/p/{led['code']}")
    await expect(page.locator("#copy-pnl")).not_to_have_text("—")
    await page.click("#subscribe-free")
    await expect(page.locator("#subscribe-note")).to_contain_text("Subscribed")
    await page.click("text=Copying")
    await page.wait_for_url("**/app/social")
    sub = page.locator("#subs-table tbody tr").first
    await expect(sub.locator(".sub-status")).to_have_text("active")
    await sub.locator("text=Cancel").click()
    await expect(sub.locator(".sub-status")).to_have_text("cancelled")
    await leader_context.close()


async def test_social_pages_speak_in_codes_names_and_words(
    page: Page, web: WebApp, browser: Browser
) -> None:
    """Issue 33, point 4: the copy form takes the code shown everywhere; the Copying table, the
    comments and the leader's inbox name portfolios and people, not ids; the rules are a page."""
    leader_context = await new_context(browser, web)
    leader = await leader_context.new_page()
    await sign_up_in_browser(leader, unique_email("ann"))
    await call(leader, "PATCH", "/v1/user/profile", {"display_name": "Ann Leads"})
    led = await call(
        leader,
        "POST",
        "/v1/portfolios",
        {"name": "steady gains", "visibility": "public", "initial_balance": "10000"},
    )
    await sign_up_in_browser(page, unique_email("bob"))
    await call(page, "PATCH", "/v1/user/profile", {"display_name": "Bob Copies"})
    mine = await call(page, "POST", "/v1/portfolios", {"name": "my copies"})

    await page.goto("/app/social")
    await page.fill("#follow-leader", led["code"])  # the code, as the pages show it
    await page.select_option("#follow-portfolio", str(mine["id"]))
    await page.select_option("#follow-mode", "fixed_amount")
    await page.fill("#follow-size", "5")
    await page.fill("#follow-allocation", "1000")
    await page.click("#follow-form button[type=submit]")
    row = page.locator("#copies-table tbody tr").first
    await expect(row.locator(".copy-leader")).to_have_text(f"steady gains ({led['code']})")
    await expect(row.locator(".copy-into")).to_have_text(f"my copies ({mine['code']})")
    await expect(row.locator(".copy-mode")).to_have_text("Fixed amount: 5 USDT margin per order")
    rules = page.get_by_role("link", name="How copying, the revenue share and subscriptions work")
    await rules.click()
    await page.wait_for_url("**/help/copying")
    await expect(page.locator("h1")).to_have_text("How copying and following work")
    await expect(page.locator("#help-share")).to_be_visible()

    await page.goto(f"/p/{led['code']}")
    await page.fill("#comment-text", "how do you size?")
    await page.click("#comment-form button[type=submit]")
    first = page.locator("#comment-list > li").first
    await expect(first.locator(".comment-author")).to_have_text("Bob Copies")
    await expect(first).not_to_contain_text("user ")

    await leader.goto("/app/inbox")
    items = leader.locator("#inbox-list > li")
    commented = items.filter(has_text="New comment")
    await expect(commented).to_contain_text(
        f"Bob Copies commented on portfolio steady gains ({led['code']})."
    )
    await expect(commented.get_by_role("link")).to_have_attribute("href", f"/p/{led['code']}")
    copier = items.filter(has_text="New copier")
    await expect(copier).to_contain_text(
        f"Bob Copies started copying steady gains ({led['code']}) with 1,000.00 USDT"
    )
    await leader_context.close()


async def test_comment_threads_on_the_public_page(page: Page, web: WebApp) -> None:
    await sign_up_in_browser(page, unique_email("talker"))
    room = await call(page, "POST", "/v1/portfolios", {"name": "room", "visibility": "public"})
    await page.goto(f"/p/{room['code']}")
    await page.fill("#comment-text", "<b>not bold</b>")
    await page.click("#comment-form button[type=submit]")
    first = page.locator("#comment-list > li").first
    await expect(first).to_contain_text("<b>not bold</b>")  # shown as written, not as HTML
    assert await first.locator("b").count() == 0
    await first.locator("text=Reply").click()
    await expect(page.locator("#comment-label")).to_contain_text("Reply to comment")
    await page.fill("#comment-text", "a reply")
    await page.click("#comment-form button[type=submit]")
    await expect(first.locator(".replies li")).to_contain_text("a reply")


async def test_public_page_shows_subscriber_counts_signed_out(
    page: Page, web: WebApp, browser: Browser
) -> None:
    author_context = await new_context(browser, web)
    author = await author_context.new_page()
    await sign_up_in_browser(author, unique_email("author"))
    shown = await call(author, "POST", "/v1/portfolios", {"name": "shown", "visibility": "public"})
    await call(author, "PUT", f"/v1/portfolios/{shown['id']}/subscription-price", {"price": "7"})
    await call(author, "POST", "/v1/subscribe", {"portfolio_id": shown["id"]})  # free, as owner
    fan_context = await new_context(browser, web)
    fan = await fan_context.new_page()
    await sign_up_in_browser(fan, unique_email("fan"))
    await operator_credit(web.app, (await call(fan, "GET", "/v1/user"))["id"], "7")
    await call(fan, "POST", "/v1/subscribe", {"portfolio_id": shown["id"], "tier": "paid"})

    await page.goto(f"/p/{shown['code']}")  # signed out: the counts and the price are public
    await expect(page.locator("#follow-subscribers")).to_have_text("2")
    await expect(page.locator("#follow-paid")).to_have_text("1")
    await expect(page.locator("#follow-free")).to_have_text("1")
    await expect(page.locator("#follow-terms")).to_contain_text("7.00 USDT per 30 days")
    await expect(page.locator("#subscribe-free")).to_be_hidden()
    sign_in = page.locator("#follow-sign-in a")
    await expect(sign_in).to_have_attribute(
        "href", f"/login?next=/p/{shown['code']}&reason=follow-portfolio"
    )
    await author_context.close()
    await fan_context.close()


async def test_comment_threads_on_the_public_strategy_page(
    page: Page, web: WebApp, browser: Browser
) -> None:
    author_context = await new_context(browser, web)
    author = await author_context.new_page()
    await sign_up_in_browser(author, unique_email("strategist"))
    source = "symbol BTCUSDT\ntimeframe 1m\nwhen sma(5) crosses above sma(20) then buy 50%\n"
    body = {"kind": "dsl", "name": "talked about", "source": source, "visibility": "public"}
    strategy = await call(author, "POST", "/v1/strategies", body)
    await author_context.close()

    await sign_up_in_browser(page, unique_email("reader"))
    await page.goto(f"/s/{strategy['code']}")
    await page.fill("#comment-text", "<img src=x onerror=alert(1)> why 5?")
    await page.click("#comment-form button[type=submit]")
    first = page.locator("#comment-list > li").first
    await expect(first).to_contain_text("<img src=x onerror=alert(1)> why 5?")  # as written
    assert await first.locator("img").count() == 0
    await first.locator("text=Reply").click()
    await expect(page.locator("#comment-label")).to_contain_text("Reply to comment")
    await page.fill("#comment-text", "and why 20?")
    await page.click("#comment-form button[type=submit]")
    await expect(first.locator(".replies li")).to_contain_text("and why 20?")
    listed = await call(page, "GET", f"/v1/comments?strategy_id={strategy['id']}")
    assert [c["strategy_id"] for c in listed] == [strategy["id"]]
