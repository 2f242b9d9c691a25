"""Validation at save: a source becomes a summary stored with its version, or InvalidSource."""

from typing import Any

from papertrade.strategies import pycheck
from papertrade.strategies.dsl.parse import DslError, parse
from papertrade.strategies.errors import InvalidSource


def summarize(kind: str, source: str) -> dict[str, Any]:
    """What the source declares (settings, rules); raises InvalidSource at the first problem."""
    if kind == "dsl":
        try:
            program = parse(source)
        except DslError as exc:
            raise InvalidSource(exc.line, exc.column, exc.message) from None
        return {
            "symbol": program.symbol,
            "timeframe": program.timeframe or "1h",
            "leverage": program.leverage,
            "rules": [{"line": r.line, "text": r.text} for r in program.rules],
        }
    try:
        summary = pycheck.check(source)
    except pycheck.PythonSourceError as exc:
        raise InvalidSource(exc.line, exc.column, exc.message) from None
    settings = summary.settings
    return {
        "symbol": settings.get("symbol"),
        "timeframe": settings.get("timeframe", "1h"),
        "leverage": settings.get("leverage", 1),
        "settings": {k: v for k, v in settings.items() if k not in ("symbol", "timeframe")},
    }
