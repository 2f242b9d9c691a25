"""Kill -9 the service in the middle of an SMTP conversation. Before the content was sent (held
after RCPT TO) the mail certainly was not handed over: after the restart it is sent, once, with
its stable Message-ID. After the content (held before the server's answer to DATA) it may have
been accepted: it is marked `interrupted` and never sent again."""

import asyncio
import sqlite3
import time
from pathlib import Path

import httpx
import pytest

from tests.conftest import PG_URL
from tests.fakes.smtp_sink import Sink, smtp_sink
from tests.liveserver import free_port
from tests.reliability.crashkit import Service


def _rows(db: Path) -> dict[str, tuple[int, str]]:
    """subject → (id, status) of every queued mail."""
    with sqlite3.connect(db) as conn:
        return {
            str(subject): (int(row_id), str(status))
            for row_id, subject, status in conn.execute(
                "SELECT id, subject, status FROM email_messages"
            )
        }


def _status(db: Path, address: str) -> str:
    with sqlite3.connect(db) as conn:
        (status,) = conn.execute(
            "SELECT status FROM email_messages WHERE to_address = ?", (address,)
        ).fetchone()
    return str(status)


async def _until(check: object, what: str, within: float = 30) -> None:
    deadline = time.monotonic() + within
    while not check():  # type: ignore[operator]
        assert time.monotonic() < deadline, what
        await asyncio.sleep(0.05)


async def _forgot(url: str, email: str) -> None:
    async with httpx.AsyncClient(base_url=url, headers={"Origin": url}, timeout=60) as client:
        asked = await client.post("/v1/auth/password/forgot", json={"email": email})
        assert asked.status_code == 202, asked.text


async def _sign_up(url: str, email: str) -> None:
    async with httpx.AsyncClient(base_url=url, headers={"Origin": url}, timeout=60) as client:
        made = await client.post(
            "/v1/auth/signup", json={"email": email, "password": "crash-test-pass"}
        )
        assert made.status_code == 201, made.text


def start(service: Service) -> None:
    """Start the service, allowing a loaded machine more than crashkit's 30 s to come up."""
    try:
        service.start()
    except RuntimeError:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                if httpx.get(service.url + "/healthz", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        raise


def _copies(sink: Sink, address: str) -> list[str]:
    return [str(m["Message-ID"]) for m in sink.to(address)]


@pytest.mark.skipif(PG_URL is not None, reason="the embedded mode under test is SQLite")
async def test_kill_minus_nine_mid_smtp_sends_once_or_reports_it(tmp_path: Path) -> None:
    async with smtp_sink() as sink:
        port = free_port()
        env = {
            "PAPERTRADE_SMTP_HOST": "127.0.0.1",
            "PAPERTRADE_SMTP_PORT": str(sink.port),
            "PAPERTRADE_SMTP_STARTTLS": "false",
            "PAPERTRADE_EMAIL_FROM": "Papertrade <no-reply@papertrade.test>",
        }
        service = Service(tmp_path, port, env=env)
        db = tmp_path / "papertrade.db"
        ann, bob, cat = (f"{n}-{time.time_ns()}@example.com" for n in ("ann", "bob", "cat"))
        try:
            start(service)
            for address in (ann, bob, cat):
                await _sign_up(service.url, address)

            # 1. Killed before the content went: sent after the restart, once.
            sink.hold = "rcpt"
            await _forgot(service.url, ann)
            await _until(lambda: sink.held, "the sender never reached RCPT TO")
            assert [s for _, s in _rows(db).values()] == ["sending"]
            await asyncio.to_thread(service.kill)
            sink.hold = ""
            await asyncio.to_thread(start, service)
            await sink.wait_for(ann, 1, within=30)
            await _until(lambda: _rows(db)["Reset your password"][1] == "sent", "not marked sent")
            (first,) = _copies(sink, ann)
            row_id = _rows(db)["Reset your password"][0]
            assert first.startswith(f"<mail-{row_id}.") and first.endswith("@papertrade.test>")

            # 2. Killed after the content, before the server's 250: perhaps delivered, so it
            #    is marked interrupted and never sent again.
            sink.hold = "data"
            await _forgot(service.url, bob)
            await _until(lambda: sink.held, "the sender never sent DATA")
            assert _status(db, bob) == "handover"
            await asyncio.to_thread(service.kill)
            sink.hold = ""
            await asyncio.to_thread(start, service)
            # A later mail goes out: the sender has passed the interrupted one by then.
            await _forgot(service.url, cat)
            await sink.wait_for(cat, 1, within=30)
            await _until(lambda: _status(db, cat) == "sent", "cat's mail not marked sent")
        finally:
            service.stop()
        with sqlite3.connect(db) as conn:
            statuses = dict(conn.execute("SELECT to_address, status FROM email_messages"))
            (error,) = conn.execute(
                "SELECT error FROM email_messages WHERE to_address = ?", (bob,)
            ).fetchone()
        assert statuses == {ann: "sent", bob: "interrupted", cat: "sent"}
        assert "perhaps delivered" in error
        assert len(_copies(sink, bob)) == 1  # the one copy the killed sender handed over
        assert len(_copies(sink, ann)) == 1
