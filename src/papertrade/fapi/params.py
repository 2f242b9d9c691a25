"""Request parameters as Binance reads them: query string and form body merged, query wins.

Parsing is strict where Binance is (illegal characters, duplicates, malformed numbers) and every
failure is a Binance-shaped error, never a framework 422 or a 500.
"""

import re
from collections.abc import Collection
from decimal import Decimal, InvalidOperation
from typing import Any
from urllib.parse import unquote_plus

import orjson

from papertrade.fapi.errors import FapiError, illegal, invalid_data, mandatory

MAX_PARAMS = 40
INT64_MAX = 2**63 - 1
SYMBOL_RE = re.compile(r"^[A-Z0-9\-_.]{1,20}$")
SYMBOL_LEGAL = "^[A-Z0-9-_.]{1,20}$"
# Plain decimals as Binance documents them, plus the scientific form Python's str(float) makes.
DECIMAL_RE = re.compile(r"^[+-]?([0-9]{1,20}(\.[0-9]{0,20})?|\.[0-9]{1,20})([eE][+-]?[0-9]{1,3})?$")
DECIMAL_LEGAL = "^([0-9]{1,20})(\\.[0-9]{1,20})?$"
INT_RE = re.compile(r"^-?[0-9]{1,19}$")
INT_LEGAL = "^[0-9]{1,20}$"
CONTROL_RE = re.compile(r"[\x00-\x1f\x7f]")  # never legal, and PostgreSQL text refuses NUL


def _split(raw: bytes) -> list[tuple[str, str]]:
    if not raw:
        return []
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise FapiError(400, -1100, "Illegal characters found in a parameter.") from None
    pairs: list[tuple[str, str]] = []
    for item in text.split("&"):
        if not item:
            continue
        name, _, value = item.partition("=")
        try:
            pairs.append(
                (unquote_plus(name, errors="strict"), unquote_plus(value, errors="strict"))
            )
        except UnicodeDecodeError:
            raise FapiError(400, -1100, "Illegal characters found in a parameter.") from None
    for name, value in pairs:
        if CONTROL_RE.search(name) or CONTROL_RE.search(value):
            shown = CONTROL_RE.sub("?", name[:40])
            raise FapiError(400, -1100, f"Illegal characters found in parameter '{shown}'.")
    if len(pairs) > MAX_PARAMS:
        raise FapiError(
            400, -1101, f"Too many parameters; expected at most {MAX_PARAMS}, got {len(pairs)}."
        )
    return pairs


def _unique(pairs: list[tuple[str, str]]) -> dict[str, str]:
    values: dict[str, str] = {}
    for name, value in pairs:
        if name in values:
            shown = name if len(name) <= 40 else name[:40] + "…"
            raise FapiError(400, -1101, f"Duplicate values for a parameter detected: '{shown}'.")
        values[name] = value
    return values


def json_value_text(value: Any) -> str | None:
    """A parameter sent as a JSON value (a batch's order, a WebSocket API request) as the text a
    query string carries and clients sign: strings as they are, numbers as JSON writes them,
    booleans `true` / `false`; None for what no parameter can be (an object, a list, null)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, int | float):
        return orjson.dumps(value).decode()  # 0.001, not Python's 1e-03
    return None


class Params:
    """The merged parameters of one request, with Binance's typed getters."""

    __slots__ = ("values",)

    def __init__(self, values: dict[str, str]):
        self.values = values

    @classmethod
    def parse(cls, query: bytes, body: bytes) -> "Params":
        """Merge the raw query string and a form body; the query string wins on a conflict."""
        merged = _unique(_split(body))
        merged.update(_unique(_split(query)))
        return cls(merged)

    def has(self, name: str) -> bool:
        return self.values.get(name, "") != ""

    def text(self, name: str, *, required: bool = False, max_len: int = 64) -> str | None:
        """A string; empty counts as absent (Binance: "not sent, was empty/null")."""
        value = self.values.get(name, "")
        if value == "":
            if required:
                raise mandatory(name)
            return None
        if len(value) > max_len:
            raise invalid_data(name, f"It is longer than {max_len} characters.")
        return value

    def symbol(self, *, required: bool = True, name: str = "symbol") -> str | None:
        value = self.values.get(name, "")
        if value == "":
            if required:
                raise mandatory(name)
            return None
        upper = value.upper()
        if not SYMBOL_RE.match(upper):
            raise illegal(name, SYMBOL_LEGAL)
        return upper

    def decimal(self, name: str, *, required: bool = False) -> Decimal | None:
        value = self.values.get(name, "")
        if value == "":
            if required:
                raise mandatory(name)
            return None
        if not DECIMAL_RE.match(value):
            raise illegal(name, DECIMAL_LEGAL)
        try:
            number = Decimal(value)
        except InvalidOperation:  # pragma: no cover - the pattern admits only valid literals
            raise illegal(name, DECIMAL_LEGAL) from None
        return number.copy_abs() if number.is_zero() else number  # no "-0" downstream

    def integer(
        self,
        name: str,
        *,
        required: bool = False,
        low: int = -INT64_MAX,
        high: int = INT64_MAX,
    ) -> int | None:
        value = self.values.get(name, "")
        if value == "":
            if required:
                raise mandatory(name)
            return None
        if not INT_RE.match(value):
            raise mandatory(name) if required else illegal(name, INT_LEGAL)
        number = int(value)
        if not low <= number <= high:
            raise invalid_data(name, f"It must be between {low} and {high}.")
        return number

    def boolean(self, name: str, default: bool = False) -> bool:
        value = self.values.get(name, "")
        if value == "":
            return default
        lowered = value.lower()
        if lowered not in ("true", "false"):
            raise invalid_data(name, "Use 'true' or 'false'.")
        return lowered == "true"

    def choice(
        self,
        name: str,
        allowed: Collection[str],
        *,
        error: FapiError | None = None,
        default: str | None = None,
        required: bool = False,
    ) -> str | None:
        """One of `allowed` (compared in upper case); `error` when it is something else."""
        value = self.values.get(name, "")
        if value == "":
            if required:
                raise mandatory(name)
            return default
        upper = value.upper()
        if upper not in allowed:
            raise error or invalid_data(name, f"Use one of {', '.join(sorted(allowed))}.")
        return upper

    def limit(self, default: int, maximum: int, name: str = "limit") -> int:
        value = self.integer(name, low=1, high=maximum)
        return default if value is None else value
