"""The server side of the strategy pages: who may see which shell, escaping, and the bundled
editor served from the front-end packages."""

import re
from collections.abc import Awaitable, Callable

import httpx
import pytest

from papertrade.strategies.validate import summarize
from papertrade.web.routes import STATIC_DIR
from tests.conftest import User

SOURCE = "symbol BTCUSDT\ntimeframe 1h\nwhen close > sma(20) then buy 10%\n"


async def test_strategy_pages_need_a_session(anon: httpx.AsyncClient) -> None:
    for path in ["/app/strategies", "/app/strategies/1"]:
        response = await anon.get(path)
        assert response.status_code == 303, path
        assert response.headers["location"].startswith("/login?next=%2Fapp%2Fstrategies")


async def test_the_editor_is_for_the_owner_only(
    user: User, user_factory: Callable[..., Awaitable[User]]
) -> None:
    created = await user.post(
        "/v1/strategies",
        json={"kind": "dsl", "name": '<script>alert("x")</script> & co', "source": SOURCE},
    )
    assert created.status_code == 201, created.text
    strategy = created.json()
    mine = await user.get(f"/app/strategies/{strategy['id']}")
    assert mine.status_code == 200
    assert "script-src 'self'" in mine.headers["content-security-policy"]
    assert "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; &amp; co" in mine.text
    assert '<script>alert("x")' not in mine.text
    assert f'data-code="{strategy["code"]}"' in mine.text and 'data-kind="dsl"' in mine.text
    assert (await user.get("/app/strategies")).status_code == 200
    other = await user_factory()
    theirs = await other.get(f"/app/strategies/{strategy['id']}")
    assert theirs.status_code == 404 and "alert(" not in theirs.text
    for missing in ["/app/strategies/999999", f"/app/strategies/{2**63}"]:
        assert (await user.get(missing)).status_code == 404, missing


async def test_public_strategy_shell(anon: httpx.AsyncClient, user: User) -> None:
    made = await user.post(
        "/v1/strategies",
        json={
            "kind": "dsl",
            "name": "shown",
            "source": "symbol BTCUSDT\nwhen close > open then buy",
            "visibility": "public",
        },
    )
    assert made.status_code == 201, made.text
    code = made.json()["code"]
    page = await anon.get(f"/s/{code}")  # a public strategy's page (an unknown code is a 404)
    assert page.status_code == 200 and f'data-code="{code}"' in page.text
    for bad in ["/s/S0000001%3Cx%3E", "/s/" + "S" * 21]:
        assert (await anon.get(bad)).status_code == 404, bad


async def test_the_editor_bundle_is_served(anon: httpx.AsyncClient) -> None:
    bundle = await anon.get("/static/vendor/papertrade-bundle/codemirror.mjs")
    assert bundle.status_code == 200
    assert "javascript" in bundle.headers["content-type"]
    assert "createEditor" in bundle.text


@pytest.mark.parametrize("kind", ["dsl", "python"])
def test_the_examples_a_new_strategy_starts_from_pass_the_save_check(kind: str) -> None:
    examples = (STATIC_DIR / "js" / "strategy" / "examples.js").read_text()
    found = re.search(kind + r": `(.*?)`", examples, re.S)
    assert found is not None
    summary = summarize(kind, found.group(1))
    assert summary["symbol"] == "BTCUSDT" and summary["timeframe"] == "1h"
