"""`papertrade worker`: takes the jobs an API process enqueues; refuses to start without a queue."""

import asyncio
import subprocess
from pathlib import Path

import pytest

from papertrade.config import Settings
from papertrade.engine.jobs import EQUITY_SNAPSHOTS
from papertrade.kit.time import now_ms
from tests.conftest import PG_URL, running_app, sign_up
from tests.jobs.helpers import PAPERTRADE, environment, wait_for_job
from tests.reliability import forks
from tests.strategies.test_api import create, wait_backtest
from tests.trading_api.helpers import market, set_price


@pytest.mark.skipif(not PG_URL, reason="a worker serves a deployment on PostgreSQL and Redis")
async def test_papertrade_worker_runs_a_job_an_api_process_enqueued(
    shared_settings: Settings, tmp_path: Path
) -> None:
    assert shared_settings.redis_url is not None
    # This API process takes no jobs: only the worker can run it.
    settings = shared_settings.model_copy(update={"jobs_in_process": False})
    async with running_app(settings) as api:
        user = await sign_up(api)
        pid = (await user.portfolio())["id"]
        await set_price(api, "BTCUSDT", "60000")
        await market(user, pid, "BTCUSDT", "buy", "0.1")
        await set_price(api, "BTCUSDT", "61000")

        log = tmp_path / "worker.log"
        env = environment(
            tmp_path,
            database_url=settings.database_url,
            redis_url=shared_settings.redis_url,
            market_source="sim",
        )
        worker = forks.start([PAPERTRADE, "worker"], env, str(log))
        try:
            job_id = await api.state.jobs.enqueue(EQUITY_SNAPSHOTS)
            row = await wait_for_job(api, job_id, "succeeded", "failed", within=60)
            assert row.status == "succeeded", log.read_text()
            assert row.worker.endswith(f":{worker.pid}"), row.worker
            assert row.result == {"marked": 1}
            point = (await user.get(f"/v1/portfolios/{pid}/equity-curve")).json()[-1]
            # Marked at the leader's price, which the worker follows through Redis: 0.1 × 1000.
            assert round(point["equity"] - point["balance"], 6) == 100
        finally:
            stopped = await forks.stop(worker)
            await user.client.aclose()
    assert stopped == 0, log.read_text()  # a clean stop


@pytest.mark.parametrize(
    ("settings", "said"),
    [
        ({"database_url": "postgresql+asyncpg://nobody@127.0.0.1:1/x"}, "set PAPERTRADE_REDIS_URL"),
        ({"redis_url": "redis://127.0.0.1:6379/13"}, "papertrade worker needs PostgreSQL"),
    ],
)
async def test_papertrade_worker_refuses_to_start_without_a_queue(
    settings: dict[str, str], said: str, tmp_path: Path
) -> None:
    worker = await asyncio.create_subprocess_exec(
        PAPERTRADE,
        "worker",
        env=environment(tmp_path, **settings),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    _, errors = await asyncio.wait_for(worker.communicate(), 60)
    assert worker.returncode == 1
    assert said in errors.decode()


@pytest.mark.skipif(not PG_URL, reason="a worker serves a deployment on PostgreSQL and Redis")
async def test_a_backtest_runs_on_a_papertrade_worker(
    shared_settings: Settings, tmp_path: Path
) -> None:
    """Issue #16 item 11, scaled out: the API process answers 202 and the backtest itself runs
    on a `papertrade worker` (its job row names the worker), with the same result an in-process
    run gives (the strategies' own tests check those numbers)."""
    assert shared_settings.redis_url is not None
    settings = shared_settings.model_copy(update={"jobs_in_process": False})
    async with running_app(settings) as api:
        user = await sign_up(api)
        strategy = await create(user)
        end = now_ms() // 60_000 * 60_000
        request = {"start": end - 86_400_000, "end": end, "initial_balance": "5000"}
        started = await user.post(f"/v1/strategies/{strategy['id']}/backtests", json=request)
        assert started.status_code == 202, started.text
        queued = started.json()

        log = tmp_path / "worker.log"
        env = environment(
            tmp_path,
            database_url=settings.database_url,
            redis_url=shared_settings.redis_url,
            market_source="sim",
        )
        worker = forks.start([PAPERTRADE, "worker"], env, str(log))
        try:
            row = await wait_for_job(api, queued["job_id"], "succeeded", "failed", within=120)
            assert row.status == "succeeded", log.read_text()
            assert row.worker.endswith(f":{worker.pid}"), row.worker
            done = await wait_backtest(user, strategy["id"], queued["id"])
            assert done["status"] == "done", done["error"]
            assert done["result"]["bars"] in (1439, 1440)
            assert done["metrics"]["num_trades"] > 0
        finally:
            stopped = await forks.stop(worker)
            await user.client.aclose()
    assert stopped == 0, log.read_text()
