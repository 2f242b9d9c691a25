"""The inbound framework's limits for Finnhub and Resend: bodies over 64 KiB get 413, each
source has its own budget of events a minute (429 with Retry-After), and a credential of another
kind (the tv token, an API key) is never taken for a source's secret, nor the other way round."""

from typing import Any

import orjson
from fastapi import FastAPI

from papertrade.config import Settings
from tests.conftest import User, bearer, client_for, running_app, sign_up
from tests.foundation.helpers import hold_the_window
from tests.inbound.test_sources import SECRET, _resend

LIMIT = 3  # events a minute per source, for these tests
TOO_LARGE = 64 * 1024 + 1


async def _finnhub_source(owner: User) -> dict[str, Any]:
    created = await owner.post("/v1/webhook-sources", json={"provider": "finnhub"})
    assert created.status_code == 201, created.text
    return dict(created.json())


async def _alert(
    app: FastAPI, source: dict[str, Any], body: bytes, secret: str | None = None
) -> Any:
    async with client_for(app) as finnhub:
        return await finnhub.post(
            f"/v1/webhook/finnhub/{source['id']}",
            content=body,
            headers={"X-Finnhub-Secret": source["secret"] if secret is None else secret},
        )


async def _events(owner: User, source: dict[str, Any]) -> list[dict[str, Any]]:
    listed = await owner.get(f"/v1/webhook-sources/{source['id']}/events")
    assert listed.status_code == 200, listed.text
    return list(listed.json()["events"])


def _padded(size: int, **fields: Any) -> bytes:
    """A JSON event of exactly `size` bytes."""
    empty = orjson.dumps({**fields, "pad": ""})
    return orjson.dumps({**fields, "pad": "x" * (size - len(empty))})


async def test_a_body_over_64_kib_is_refused_with_413_and_not_stored(
    isolated_settings: Settings,
) -> None:
    settings = isolated_settings.model_copy(update={"resend_webhook_secret": SECRET})
    async with running_app(settings) as app:
        owner = await sign_up(app)
        source = await _finnhub_source(owner)
        huge = _padded(TOO_LARGE, id="big", symbol="BTCUSDT")
        refused = await _alert(app, source, huge)
        assert refused.status_code == 413, refused.text
        assert refused.json()["error"] == "payload_too_large"
        assert "65536 bytes" in refused.json()["msg"]
        assert await _events(owner, source) == []
        at_limit = await _alert(app, source, _padded(TOO_LARGE - 1, id="fits"))
        assert at_limit.status_code == 200, at_limit.text

        email = {"type": "email.delivered", "data": {"to": [owner.email]}}
        big_email = orjson.loads(_padded(TOO_LARGE, **email))
        refused = await _resend(app, big_email, "msg_big")  # signed, and still too large
        assert refused.status_code == 413, refused.text
        assert refused.json()["error"] == "payload_too_large"
        assert (await _resend(app, email, "msg_small")).json() == {"ok": True, "duplicate": False}


async def test_each_source_has_its_own_budget_of_events_a_minute(
    isolated_settings: Settings,
) -> None:
    settings = isolated_settings.model_copy(
        update={"resend_webhook_secret": SECRET, "rate_limit_inbound_per_min": LIMIT}
    )
    async with running_app(settings) as app:
        owner = await sign_up(app)
        busy, quiet = await _finnhub_source(owner), await _finnhub_source(owner)
        hold_the_window()  # every event below counts in one minute's window
        for n in range(LIMIT):
            sent = await _alert(app, busy, orjson.dumps({"id": f"a-{n}", "symbol": "ETHUSDT"}))
            assert sent.status_code == 200, sent.text
        over = await _alert(app, busy, orjson.dumps({"id": "a-over", "symbol": "ETHUSDT"}))
        assert over.status_code == 429, over.text
        assert over.json()["error"] == "rate_limited"
        assert f"{LIMIT} events a minute" in over.json()["msg"]
        assert 0 < int(over.headers["Retry-After"]) <= 60
        assert len(await _events(owner, busy)) == LIMIT  # the refused one was not stored
        other = await _alert(app, quiet, orjson.dumps({"id": "b-1", "symbol": "ETHUSDT"}))
        assert other.status_code == 200, other.text  # another source, its own budget

        email = {"type": "email.delivered", "data": {"to": [owner.email]}}
        for n in range(LIMIT):
            assert (await _resend(app, email, f"msg_{n}")).status_code == 200
        over = await _resend(app, email, "msg_over")
        assert over.status_code == 429 and over.json()["error"] == "rate_limited"
        assert int(over.headers["Retry-After"]) > 0


async def test_other_credentials_are_never_a_sources_secret(isolated_settings: Settings) -> None:
    async with running_app(isolated_settings) as app:
        owner = await sign_up(app)
        source = await _finnhub_source(owner)
        pid = (await owner.portfolio())["id"]
        others = {
            "tv token": await owner.webhook_token(pid),
            "API key": await owner.api_key(),
            "compat key": (await owner.compat_key(pid))[0],
        }
        alert = orjson.dumps({"id": "c-1", "symbol": "BTCUSDT"})
        for name, credential in others.items():
            refused = await _alert(app, source, alert, secret=credential)
            assert refused.status_code == 401, name
            assert refused.json()["error"] == "invalid_signature", name
        assert await _events(owner, source) == []
        async with client_for(app) as stranger:
            as_key = await stranger.get("/v1/user", headers=bearer(source["secret"]))
            assert as_key.status_code == 401, as_key.text
            as_token = await stranger.post(
                f"/webhook/tv/{source['secret']}", content=b"buy BTCUSDT 0.01"
            )
            assert as_token.status_code == 404 and as_token.json()["error"] == "webhook_not_found"
