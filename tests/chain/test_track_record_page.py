"""The track-record page's edges through the real app: a code that names no public portfolio is
a 404 page, a portfolio without events says so, and the verifier it offers for download is the
standalone script, byte for byte."""

from pathlib import Path

import httpx

from tests.conftest import User

SCRIPT = Path(__file__).parents[2] / "scripts" / "verify_track_record.py"


async def test_unknown_and_private_portfolios_have_no_track_record_page(
    user: User, anon: httpx.AsyncClient
) -> None:
    assert (await anon.get("/p/P9999999/track-record")).status_code == 404
    private = await user.portfolio(name="mine")
    page = await anon.get(f"/p/{private['code']}/track-record")
    assert page.status_code == 404 and "No public portfolio has this code" in page.text
    public = await user.portfolio(name="open", visibility="public")
    page = await anon.get(f"/p/{public['code']}/track-record")
    assert page.status_code == 200
    assert f"papertrade verify {public['code']} --url" in page.text
    assert (await anon.head(f"/p/{public['code']}/track-record")).status_code == 200


async def test_the_offered_verifier_is_the_standalone_script(anon: httpx.AsyncClient) -> None:
    served = await anon.get("/verify_track_record.py")
    assert served.status_code == 200
    assert served.headers["content-type"].startswith("text/x-python")
    assert "attachment" in served.headers["content-disposition"]
    assert served.content == SCRIPT.read_bytes()
