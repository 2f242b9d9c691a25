"""Answers of /v1/strategies for sources and runs that cannot be used."""

from papertrade.errors import PapertradeError


class InvalidSource(PapertradeError):
    """The source does not parse or break the interface: where (line:column) and what."""

    status_code = 422
    code = "invalid_strategy_source"

    def __init__(self, line: int, column: int, message: str):
        super().__init__(f"line {line}:{column}: {message}")
        self.line = line
        self.column = column


class NotRunnable(PapertradeError):
    """Valid, but it cannot be run as asked (no symbol given, Python not runnable here…)."""

    status_code = 422
    code = "strategy_not_runnable"
