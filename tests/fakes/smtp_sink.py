"""A local SMTP sink on 127.0.0.1 (aiosmtpd), for tests only: it keeps every message it gets."""

import asyncio
import email
import email.policy
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from email.message import EmailMessage
from typing import Any

from aiosmtpd.controller import Controller


@dataclass
class Sink:
    messages: list[EmailMessage] = field(default_factory=list)
    port: int = 0
    # For the crash tests: hold the conversation after RCPT TO (before the content) or after
    # the content arrived (before answering DATA), until released; `held` says it is held.
    hold: str = ""  # "" | "rcpt" | "data"
    held: bool = False

    async def _wait_while(self, step: str) -> None:
        while self.hold == step:  # the controller's own thread and loop: polled, not awaited
            self.held = True
            await asyncio.sleep(0.02)
        self.held = False

    async def handle_RCPT(
        self, server: Any, session: Any, envelope: Any, address: str, options: Any
    ) -> str:
        envelope.rcpt_tos.append(address)
        await self._wait_while("rcpt")
        return "250 OK"

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        parsed = email.message_from_bytes(envelope.content, policy=email.policy.default)
        assert isinstance(parsed, EmailMessage)
        self.messages.append(parsed)
        await self._wait_while("data")
        return "250 Message accepted for delivery"

    def to(self, address: str) -> list[EmailMessage]:
        return [m for m in self.messages if m["To"] == address]

    async def wait_for(
        self, address: str, count: int = 1, within: float = 30
    ) -> list[EmailMessage]:
        deadline = asyncio.get_running_loop().time() + within
        while len(self.to(address)) < count:
            assert asyncio.get_running_loop().time() < deadline, f"no mail to {address}"
            await asyncio.sleep(0.05)
        return self.to(address)


@asynccontextmanager
async def smtp_sink(port: int = 0) -> AsyncIterator[Sink]:
    sink = Sink()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", port))
        sink.port = probe.getsockname()[1]
    controller = Controller(sink, hostname="127.0.0.1", port=sink.port)
    controller.start()
    try:
        yield sink
    finally:
        controller.stop()
