"""A database at 0016 (comments on portfolios only) upgrades in place on the service's own engine
(SQLite with foreign keys on): its comments keep their portfolio and their replies, and the
upgraded database takes comments on strategies."""

from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine

from papertrade.config import Settings
from tests.conftest import bearer, client_for, running_app
from tests.foundation.old_database import old_account

BEFORE = "0016_conditional_origin"


async def _write_before(url: str) -> tuple[str, int, int]:
    """(API key, portfolio id, the top comment's id), with one reply under that comment."""
    engine = create_async_engine(url)
    try:
        key, pid = await old_account(engine, BEFORE, "talk@example.com", 1000)
        async with engine.begin() as connection:
            uid = (await connection.execute(text("SELECT user_id FROM portfolios"))).scalar_one()
            insert = text(
                "INSERT INTO comments (portfolio_id, user_id, parent_id, text, created_at) "
                "VALUES (:p, :u, :parent, :t, 1) RETURNING id"
            )
            top = (
                await connection.execute(insert, {"p": pid, "u": uid, "parent": None, "t": "top"})
            ).scalar_one()
            await connection.execute(insert, {"p": pid, "u": uid, "parent": top, "t": "reply"})
        return key, pid, int(top)
    finally:
        await engine.dispose()


async def test_comments_before_strategy_threads_upgrade_in_place(
    isolated_settings: Settings,
) -> None:
    key, pid, top = await _write_before(isolated_settings.database_url)
    async with running_app(isolated_settings) as app, client_for(app) as client:  # migrates
        headers = bearer(key)
        (kept,) = (
            await client.get("/v1/comments", params={"portfolio_id": pid}, headers=headers)
        ).json()
        assert (kept["id"], kept["text"], kept["strategy_id"]) == (top, "top", None)
        assert [r["text"] for r in kept["replies"]] == ["reply"]
        # The upgraded database takes a thread on a strategy.
        strategy = await client.post(
            "/v1/strategies",
            json={
                "kind": "dsl",
                "name": "x",
                "source": "symbol BTCUSDT\ntimeframe 1m\n"
                "when sma(10) crosses above sma(30) then buy 50%\n",
            },
            headers=headers,
        )
        assert strategy.status_code == 201, strategy.text
        sid = strategy.json()["id"]
        posted = await client.post(
            "/v1/comments", json={"strategy_id": sid, "text": "new"}, headers=headers
        )
        assert posted.status_code == 201, posted.text
        (on_strategy,) = (
            await client.get("/v1/comments", params={"strategy_id": sid}, headers=headers)
        ).json()
        assert on_strategy["text"] == "new"
