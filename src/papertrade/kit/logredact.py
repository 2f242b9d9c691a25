"""Credentials never reach the log: webhook tokens in paths and request signatures are masked.

A webhook token is the whole credential of its URL, and uvicorn's access log, like our own error
lines, prints request paths. Masking happens where every log record is made, so no logger and no
handler configuration (uvicorn's included) can miss it.
"""

import logging
import re
from typing import Any

MASK = "***"
_SECRETS = (
    # /webhook/<source>/<token>, also under the legacy prefix.
    re.compile(r"(/webhook/[^/\s?#\"']+/)[^/\s?#\"']+"),
    # Signed /fapi calls carry their HMAC in the query string; keys may appear as parameters too.
    re.compile(r"([?&](?:signature|api_?key|token)=)[^&\s#\"']+", re.IGNORECASE),
)


def redact(text: str) -> str:
    """`text` with every credential replaced by ***."""
    for pattern in _SECRETS:
        text = pattern.sub(rf"\g<1>{MASK}", text)
    return text


def _redact_value(value: Any) -> Any:
    return redact(value) if isinstance(value, str) else value


def install() -> None:
    """Mask credentials in every log record made from now on, by any logger (idempotent)."""
    make_record = logging.getLogRecordFactory()
    if getattr(make_record, "redacting", False):
        return

    def redacting_factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = make_record(*args, **kwargs)
        record.msg = _redact_value(record.msg)
        if isinstance(record.args, tuple):
            record.args = tuple(_redact_value(value) for value in record.args)
        elif isinstance(record.args, dict):
            record.args = {name: _redact_value(value) for name, value in record.args.items()}
        return record

    redacting_factory.redacting = True  # type: ignore[attr-defined]
    logging.setLogRecordFactory(redacting_factory)
