"""An app that mails through a local SMTP sink."""

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from email.message import EmailMessage

from fastapi import FastAPI

from papertrade.config import Settings
from tests.conftest import running_app
from tests.fakes.smtp_sink import Sink, smtp_sink


@asynccontextmanager
async def mail_app(settings: Settings) -> AsyncIterator[tuple[FastAPI, Sink]]:
    async with smtp_sink() as sink:
        configured = settings.model_copy(
            update={
                "smtp_host": "127.0.0.1",
                "smtp_port": sink.port,
                "smtp_starttls": False,
                "email_from": "Papertrade <no-reply@papertrade.test>",
            }
        )
        async with running_app(configured) as app:
            yield app, sink


def text_of(message: EmailMessage) -> str:
    part = message.get_body(("plain",))
    assert part is not None
    return str(part.get_content())


def link_in(message: EmailMessage, path: str) -> str:
    found = re.search(r"https?://\S+" + re.escape(path) + r"\S*", text_of(message))
    assert found is not None, text_of(message)
    return found.group(0)
