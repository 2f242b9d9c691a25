"""The web app's inbox page: for signed-in users, with the bell in every signed-in page's nav."""

import httpx

from tests.conftest import User


async def test_the_inbox_page_is_for_signed_in_users(anon: httpx.AsyncClient, user: User) -> None:
    away = await anon.get("/app/inbox")
    assert away.status_code == 303 and away.headers["location"].startswith("/login?next=")
    page = await user.get("/app/inbox")
    assert page.status_code == 200
    assert "/static/app/js/pages/inbox.js" in page.text
    assert 'id="prefs-table"' in page.text and 'id="tg-link"' in page.text
    dashboard = await user.get("/app")
    assert 'href="/app/inbox"' in dashboard.text and 'id="inbox-count"' in dashboard.text
    signed_out_home = await anon.get("/markets")
    assert 'id="inbox-count"' not in signed_out_home.text
