"""A fake Telegram Bot API on 127.0.0.1 (Starlette under uvicorn), for tests only.

It answers getMe and sendMessage the way api.telegram.org does (`{"ok": true, "result": …}`),
records every message with the time it arrived, and can be told to answer a chat with 403
(the user blocked the bot) or the next sends with 429 and a `retry_after`.
"""

import asyncio
import socket
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

TOKEN = "123456:TEST-token"


@dataclass
class Sent:
    chat_id: int
    text: str
    parse_mode: str | None
    at: float  # time.monotonic() when it arrived


@dataclass
class FakeTelegram:
    sent: list[Sent] = field(default_factory=list)
    blocked: set[int] = field(default_factory=set)
    flood_next: int = 0  # answer this many sends with 429
    retry_after: int = 1
    flooded_at: list[float] = field(default_factory=list)  # when each 429 was answered
    base_url: str = ""
    # For the crash tests: a sendMessage is recorded (so it counts as posted), then its answer
    # is held while `hold` is set; `held` says one is being held.
    hold: bool = False
    held: bool = False

    def to(self, chat_id: int) -> list[str]:
        return [s.text for s in self.sent if s.chat_id == chat_id]

    async def wait_for(self, count: int, within: float = 30) -> list[Sent]:
        deadline = time.monotonic() + within
        while len(self.sent) < count:
            assert time.monotonic() < deadline, f"only {len(self.sent)} messages arrived"
            await asyncio.sleep(0.02)
        return self.sent

    async def _method(self, request: Request) -> JSONResponse:
        token, method = request.path_params["token"], request.path_params["method"]
        if token != TOKEN:
            return JSONResponse(
                {"ok": False, "error_code": 401, "description": "Unauthorized"}, 401
            )
        form: dict[str, Any] = dict(await request.form())
        if not form and request.headers.get("content-type", "").startswith("application/json"):
            form = await request.json()
        if method == "getMe":
            me = {"id": 123456, "is_bot": True, "first_name": "Papertrade", "username": "pt_bot"}
            return JSONResponse({"ok": True, "result": me})
        if method != "sendMessage":
            return JSONResponse({"ok": False, "error_code": 404, "description": "Not Found"}, 404)
        chat_id = int(form["chat_id"])
        if self.flood_next > 0:
            self.flood_next -= 1
            self.flooded_at.append(time.monotonic())
            return JSONResponse(
                {
                    "ok": False,
                    "error_code": 429,
                    "description": f"Too Many Requests: retry after {self.retry_after}",
                    "parameters": {"retry_after": self.retry_after},
                },
                429,
            )
        if chat_id in self.blocked:
            return JSONResponse(
                {
                    "ok": False,
                    "error_code": 403,
                    "description": "Forbidden: bot was blocked by the user",
                },
                403,
            )
        text = str(form["text"])
        self.sent.append(Sent(chat_id, text, form.get("parse_mode"), time.monotonic()))
        while self.hold:
            self.held = True
            await asyncio.sleep(0.02)
        self.held = False
        result = {
            "message_id": len(self.sent),
            "date": int(time.time()),
            "chat": {"id": chat_id, "type": "private"},
            "text": text,
        }
        return JSONResponse({"ok": True, "result": result})


@asynccontextmanager
async def fake_telegram(port: int = 0) -> AsyncIterator[FakeTelegram]:
    fake = FakeTelegram()
    app = Starlette(routes=[Route("/bot{token}/{method}", fake._method, methods=["GET", "POST"])])
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, lifespan="off", log_level="warning"))
    task = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started:  # noqa: ASYNC110 (uvicorn offers no event to wait on)
        await asyncio.sleep(0.01)
    fake.base_url = f"http://127.0.0.1:{port}/bot"
    try:
        yield fake
    finally:
        server.should_exit = True
        await task
        sock.close()
