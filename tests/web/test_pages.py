"""The server side of the web app: who may see which page shell, and the static assets."""

import re
from collections.abc import Awaitable, Callable
from pathlib import Path

import httpx

from papertrade.web.routes import STATIC_DIR
from tests.conftest import User


async def test_public_pages_render_for_anyone(anon: httpx.AsyncClient) -> None:
    for path in [
        "/",
        "/login",
        "/signup",
        "/markets",
        "/markets/BTCUSDT",
        "/square",
    ]:
        response = await anon.get(path)
        assert response.status_code == 200, path
        assert response.headers["content-type"].startswith("text/html")
        assert "script-src 'self'" in response.headers["content-security-policy"]
        assert 'id="sim-banner"' in response.text


async def test_app_pages_send_signed_out_visitors_to_sign_in(anon: httpx.AsyncClient) -> None:
    for path in ["/app", "/app/portfolios/1", "/app/settings/api-keys", "/app/nothing"]:
        response = await anon.get(path)
        assert response.status_code == 303, path
        assert response.headers["location"].startswith("/login?next=%2Fapp")
    page = await anon.get("/login?next=/app/portfolios/1")
    assert 'data-next="/app/portfolios/1"' in page.text
    assert 'id="auth-refused"' in page.text


async def test_sign_in_never_redirects_off_site(anon: httpx.AsyncClient) -> None:
    evils = ["//evil.example/x", "https://evil.example/", "/\\evil.example", "javascript:1"]
    for evil in [*evils, "/\t/evil.example", "/\n/evil.example"]:
        page = await anon.get("/login", params={"next": evil})
        assert 'data-next="/app"' in page.text, evil


async def test_sign_in_says_why_a_public_page_sent_the_visitor(anon: httpx.AsyncClient) -> None:
    login = await anon.get("/login", params={"next": "/p/P0000001", "reason": "follow-portfolio"})
    assert 'data-next="/p/P0000001"' in login.text
    assert "Sign in to follow this portfolio." in login.text
    assert 'id="auth-refused"' not in login.text  # not the generic notice
    # The way to sign up keeps both, and says it in its own words.
    assert 'href="/signup?next=/p/P0000001&amp;reason=follow-portfolio"' in login.text
    signup = await anon.get("/signup", params={"next": "/s/S0000001", "reason": "follow-strategy"})
    assert "Create an account to follow this strategy&#39;s signals." in signup.text
    assert 'href="/login?next=/s/S0000001&amp;reason=follow-strategy"' in signup.text
    # A reason not on the list is neither shown nor passed on: the page repeats no words
    # taken from the address.
    odd = await anon.get("/login", params={"next": "/p/P0000001", "reason": "<b>pay here</b>"})
    assert "pay here" not in odd.text and 'id="auth-reason"' not in odd.text
    assert 'id="auth-refused"' in odd.text


async def test_signed_in_users_go_to_the_dashboard(user: User) -> None:
    home = await user.get("/")
    assert home.status_code == 303 and home.headers["location"] == "/app"
    login = await user.get("/login?next=/app/settings/api-keys")
    assert login.status_code == 303 and login.headers["location"] == "/app/settings/api-keys"
    dashboard = await user.get("/app")
    assert dashboard.status_code == 200 and user.email in dashboard.text


async def test_portfolio_page_is_for_its_owner_only(
    user: User, user_factory: Callable[..., Awaitable[User]]
) -> None:
    portfolio = await user.portfolio(name='<script>alert("x")</script> & co')
    mine = await user.get(f"/app/portfolios/{portfolio['id']}")
    assert mine.status_code == 200
    assert "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; &amp; co" in mine.text
    assert '<script>alert("x")' not in mine.text
    assert f'data-code="{portfolio["code"]}"' in mine.text
    other = await user_factory()
    theirs = await other.get(f"/app/portfolios/{portfolio['id']}")
    assert theirs.status_code == 404 and "not yours to see" in theirs.text
    assert "alert(" not in theirs.text  # the name, escaped or not
    missing = await user.get("/app/portfolios/999999")
    assert missing.status_code == 404


async def test_static_assets(anon: httpx.AsyncClient) -> None:
    css = await anon.get("/static/app/app.css")
    assert css.status_code == 200 and css.headers["cache-control"] == "no-cache"
    again = await anon.get("/static/app/app.css", headers={"If-None-Match": css.headers["etag"]})
    assert again.status_code == 304
    assert (await anon.get("/static/app/js/nope.js")).status_code == 404
    assert (await anon.get("/static/app/../routes.py")).status_code == 404
    assert (await anon.get("/static/app/%2e%2e/routes.py")).status_code == 404
    chart = "/static/vendor/lightweight-charts/dist/lightweight-charts.standalone.production.mjs"
    assert (await anon.get(chart)).status_code == 200


def test_every_module_import_resolves() -> None:
    """Each relative or /static import of our ES modules names a file that exists."""
    vendor = Path(__file__).resolve().parents[2] / "frontend" / "node_modules"
    pattern = re.compile(r"""(?:import|from)\s+['"]([^'"]+)['"]""")
    modules = sorted((STATIC_DIR / "js").rglob("*.js"))
    assert modules
    for module in modules:
        for target in pattern.findall(module.read_text()):
            if target.startswith("/static/vendor/"):
                resolved = vendor / target.removeprefix("/static/vendor/")
            elif target.startswith("/static/app/"):
                resolved = STATIC_DIR / target.removeprefix("/static/app/")
            else:
                resolved = (module.parent / target).resolve()
            assert resolved.is_file(), f"{module.name} imports missing {target}"


def test_templates_name_existing_page_scripts() -> None:
    templates = Path(STATIC_DIR).parent / "templates"
    routes = (Path(STATIC_DIR).parent / "routes.py").read_text()
    for script in re.findall(r'script="([a-z_]+)"', routes):
        assert (STATIC_DIR / "js" / "pages" / f"{script}.js").is_file(), script
    for template in re.findall(r'"([a-z_]+\.html)"', routes):
        assert (templates / template).is_file(), template
