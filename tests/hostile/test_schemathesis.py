"""Schemathesis over the /v1 OpenAPI document of a real server: no 5xx, every response as
documented, errors in the {"error","msg"} shape (issue 7.5, bounded run; see docs/reliability.md
for the long one)."""

import asyncio
import re
import sys
from pathlib import Path

import httpx
import pytest

from tests.conftest import PG_URL
from tests.liveserver import free_port
from tests.reliability.crashkit import Service

EXAMPLES = 8


@pytest.mark.skipif(PG_URL is not None, reason="one bounded run is enough; it uses SQLite")
async def test_schemathesis_finds_no_server_error_or_undocumented_response(tmp_path: Path) -> None:
    service = Service(tmp_path, free_port())
    await asyncio.to_thread(service.start)
    try:
        async with httpx.AsyncClient(base_url=service.url, headers={"Origin": service.url}) as web:
            await web.post(
                "/v1/auth/signup", json={"email": "fuzz@example.com", "password": "fuzzing-pass"}
            )
            csrf = {"X-CSRF-Token": web.cookies.get("csrf_token") or ""}
            key = (
                await web.post("/v1/user/api-keys", json={"scope": "write"}, headers=csrf)
            ).json()["key"]
            await web.post("/v1/portfolios", json={"name": "fuzz"}, headers=csrf)
        binary = Path(sys.executable).parent / "schemathesis"
        process = await asyncio.create_subprocess_exec(
            str(binary),
            "run",
            f"{service.url}/v1/openapi.json",
            "-H",
            f"Authorization: Bearer {key}",
            "-c",
            "not_a_server_error,content_type_conformance,response_schema_conformance,"
            "status_code_conformance",
            "-n",
            str(EXAMPLES),
            "--generation-deterministic",
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
        try:
            output, _ = await asyncio.wait_for(process.communicate(), 400)
        except TimeoutError:
            process.kill()
            raise
    finally:
        await asyncio.to_thread(service.stop)
    text = output.decode(errors="replace")
    assert process.returncode == 0, text[-4000:]
    counts = re.search(r"(\d+) generated, (\d+) passed", text)
    assert counts is not None, text[-4000:]
    assert counts.group(1) == counts.group(2)  # every generated case passed every check
    assert int(counts.group(1)) > 200
