"""Copying and following in headless Chromium: the copy form's risk settings with plain-language
errors (the page's own checks and the API's refusals), live copy activity over the `social`
socket, paid subscribing from a public page (price shown, paid from the wallet, insufficient
funds explained, cancel and resubscribe), and the author's subscriber panel."""

from playwright.async_api import Browser, Page, expect

from tests.conftest import unique_email
from tests.copytrading.test_leader_stats import made_days_ago, snapshots
from tests.trading_api.helpers import set_price
from tests.wallet.credit import operator_credit
from tests.web.conftest import WebApp, call, new_context, sign_up_in_browser


async def submit_follow(page: Page) -> None:
    await page.click("#follow-form button[type=submit]")


async def test_copy_form_risk_settings_and_plain_errors(
    page: Page, web: WebApp, browser: Browser
) -> None:
    leader_context = await new_context(browser, web)  # nobody copies their own portfolio
    leader = await leader_context.new_page()
    await sign_up_in_browser(leader, unique_email("leader"))
    led = await call(leader, "POST", "/v1/portfolios", {"name": "lead", "visibility": "public"})
    await sign_up_in_browser(page, unique_email("risky"))
    mine = await call(page, "POST", "/v1/portfolios", {"name": "copies"})
    await page.goto(f"/app/social?leader={led['id']}")
    await expect(page.locator("#live-state")).to_have_text("live")  # the social socket is up
    await page.select_option("#follow-portfolio", str(mine["id"]))
    await page.fill("#follow-size", "50")
    await page.fill("#follow-allocation", "1000")
    error = page.locator("#follow-form .form-error")

    # The page's own checks, in words, marking the field.
    await page.select_option("#follow-leverage-mode", "fixed")
    await expect(page.locator("#follow-leverage")).to_be_visible()
    await page.fill("#follow-leverage", "200")
    await submit_follow(page)
    await expect(error).to_contain_text("whole number from 1 to 125")
    await expect(page.locator("#follow-leverage")).to_have_attribute("aria-invalid", "true")
    await page.fill("#follow-leverage", "5")
    await page.fill("#follow-stop", "150")
    await submit_follow(page)
    await expect(error).to_contain_text("Portfolio stop: a loss in % of the allocation")
    await page.fill("#follow-stop", "20")
    await page.fill("#follow-slippage", "3")
    await submit_follow(page)
    await expect(error).to_contain_text("it can only be lowered")
    await page.fill("#follow-slippage", "0.3")
    await page.fill("#follow-max-margin", "-4")
    await submit_follow(page)
    await expect(error).to_contain_text("Max margin per order")
    await page.fill("#follow-max-margin", "40")
    await page.fill("#follow-symbols", "btcusdt, NOPEUSDT")
    await submit_follow(page)
    await expect(error).to_contain_text("NOPEUSDT is not a market here")
    await expect(page.locator("#follow-symbols")).to_have_attribute("aria-invalid", "true")

    await page.fill("#follow-symbols", "btcusdt, ETHUSDT")
    await submit_follow(page)
    row = page.locator("#copies-table tbody tr").first
    await expect(row.locator(".copy-status")).to_have_text("active")
    await expect(row.locator(".copy-risk")).to_have_text(
        "5x · ≤ 40 USDT margin/order · stop at −20 % · slippage ≤ 0.3 % · BTCUSDT, ETHUSDT"
    )
    (relation,) = await call(page, "GET", "/v1/copy/relations")
    relation = next(r for r in [relation] if r["role"] == "follower")
    assert (relation["leverage"], relation["max_order_margin"], relation["stop_pct"]) == (5, 40, 20)
    assert (relation["slippage_pct"], relation["symbols"]) == (0.3, ["BTCUSDT", "ETHUSDT"])
    assert relation["amount"] == 50

    # The API's refusal, said plainly: the same portfolio copies that leader already.
    await page.fill("#follow-leader", str(led["id"]))
    await page.select_option("#follow-portfolio", str(mine["id"]))
    await page.fill("#follow-size", "50")
    await page.fill("#follow-allocation", "1000")
    await submit_follow(page)
    await expect(error).to_have_text(
        "This portfolio already copies that leader. Choose another portfolio, or unfollow first."
    )

    # Live: the leader's fill is copied and the page hears it over the socket.
    await set_price(web.app, "BTCUSDT", "50000")
    buy = {"symbol": "BTCUSDT", "side": "buy", "type": "market", "quantity": "0.002"}
    await call(leader, "POST", "/v1/order", {"portfolio_id": led["id"], **buy})
    line = page.locator("#social-feed li.feed-copy-filled").first
    # 50 USDT of margin capped at 40 (max margin per order), at 5x: 200 USDT, 0.004 BTC.
    await expect(line).to_contain_text("Copied: buy 0.004 BTCUSDT at 50,000.00")
    await set_price(web.app, "SOLUSDT", "150")
    sol = {"symbol": "SOLUSDT", "side": "buy", "type": "market", "quantity": "1"}
    await call(leader, "POST", "/v1/order", {"portfolio_id": led["id"], **sol})
    await expect(page.locator("#social-feed li.feed-copy-skipped").first).to_contain_text(
        "Not copied: SOLUSDT, symbol"
    )
    await leader_context.close()


async def test_paid_subscribing_and_the_subscriber_panel(
    page: Page, web: WebApp, browser: Browser
) -> None:
    owner_context = await new_context(browser, web)
    owner = await owner_context.new_page()
    await sign_up_in_browser(owner, unique_email("author"))
    signals = await call(
        owner, "POST", "/v1/portfolios", {"name": "signals", "visibility": "public"}
    )
    await owner.goto(f"/app/social/subscribers?portfolio={signals['id']}")
    await expect(owner.locator("#panel-empty")).to_be_visible()
    await owner.fill("#price-input", "25")
    await owner.click("#price-form button[type=submit]")
    await expect(owner.locator("#price-input")).to_have_value("25")
    await owner.fill("#share-input", "40")
    await owner.click("#share-form button[type=submit]")
    await expect(owner.locator("#share-form .form-error")).to_contain_text("from 0 to 30")
    await owner.fill("#share-input", "15")
    await owner.click("#share-form button[type=submit]")
    leader = await call(owner, "GET", f"/v1/copy/leaders/{signals['id']}")
    assert leader["profit_share_pct"] == 15

    # a track record that starts 101 days ago (marks before a portfolio existed do not count)
    await made_days_ago(web.app, signals["id"], 101)
    await snapshots(web.app, signals["id"], [(100, "8000"), (60, "12000"), (20, "9000")])
    await sign_up_in_browser(page, unique_email("fan"))
    await page.goto(f"/p/{signals['code']}")
    # Leader statistics on the page: ROI per window, drawdown (tests/copytrading/test_leader_stats).
    await expect(page.locator("#copy-roi-90")).to_have_text("-16.67%")
    await expect(page.locator("#copy-roi-30")).to_have_text("+11.11%")
    # the period is older than 7 days and no mark moved in them (time-weighted, docs/social.md)
    await expect(page.locator("#copy-roi-7")).to_have_text("0.00%")
    await expect(page.locator("#copy-drawdown")).to_have_text("-25.00%")
    await expect(page.locator("#copy-share")).to_have_text("15 %")
    paid = page.locator("#subscribe-paid")
    await expect(paid).to_have_text("Subscribe (paid, 25.00 USDT / 30 days)")
    await expect(page.locator("#follow-terms")).to_contain_text("it holds 0.00 USDT")
    await paid.click()
    await page.locator("dialog button[value=ok]").click()
    note = page.locator("#subscribe-note")
    await expect(note).to_contain_text("less than the 25.00 USDT of 30 days")
    await expect(note.locator("a[href='/app/wallet']")).to_have_text("Wallet page")
    assert await call(page, "GET", "/v1/subscriptions/my") == []  # nothing happened

    await operator_credit(web.app, (await call(page, "GET", "/v1/user"))["id"], "30")
    await page.reload()
    await paid.click()
    await page.locator("dialog button[value=ok]").click()
    await expect(note).to_contain_text("Subscribed (paid)")
    await expect(page.locator("#my-subscription")).to_contain_text("You follow it (paid)")
    assert (await call(page, "GET", "/v1/user/wallet"))["balance"] == 5
    await page.click("#subscription-cancel")
    await expect(page.locator("#my-subscription")).to_contain_text("you keep access until")
    await expect(paid).to_have_text("Resubscribe (nothing to pay until the period ends)")
    await paid.click()  # takes the cancellation back, no charge, no question
    await expect(page.locator("#my-subscription")).to_contain_text("You follow it (paid)")
    assert (await call(page, "GET", "/v1/user/wallet"))["balance"] == 5

    # The Following list shows it; the owner's panel shows the subscriber and the revenue.
    await page.goto("/app/social#following")
    sub = page.locator("#subs-table tbody tr").first
    await expect(sub.locator(".sub-status")).to_have_text("active")
    await expect(sub).to_contain_text("25.00 USDT")
    await owner.reload()
    row = owner.locator("#panel-table tbody tr").first
    await expect(row.locator(".panel-tier")).to_have_text("paid")
    await expect(row.locator(".panel-status")).to_have_text("active")
    await expect(row).to_contain_text("25.00 USDT")
    await expect(owner.locator("#panel-revenue")).to_have_text("25.00 USDT")
    await expect(owner.locator("#panel-paid")).to_have_text("1")
    await expect(owner.locator("#panel-churn")).to_have_text("0.0 %")
    await sub.locator("text=Cancel").click()
    await expect(sub.locator(".sub-status")).to_have_text("cancelling")
    await owner_context.close()
