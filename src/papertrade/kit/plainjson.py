"""JSON bytes whose numbers never use exponent form.

orjson (like every float printer) writes a float below 1e-4 or from 1e16 up as `1e-7` or `1e16`:
valid JSON, but people and some clients read the tick size of 1000PEPEUSDT as a typo. Numbers
keep their value and become plain decimals (`0.0000001`).
"""

import math
import re
from decimal import Decimal
from typing import Any

import orjson

from papertrade.kit.decimals import plain

# A digit, an `e` and a digit: how orjson writes exponent form. A key or string that happens to
# match only costs the second, exact pass below.
_EXPONENT = re.compile(rb"[0-9]e[-+]?[0-9]")


def dumps(content: Any) -> bytes:
    """orjson's bytes for `content`, with every float written as a plain decimal."""
    raw = orjson.dumps(content)
    if _EXPONENT.search(raw) is None:
        return raw
    return orjson.dumps(_plain_floats(content))


def _plain_floats(value: Any) -> Any:
    if isinstance(value, float):
        text = repr(value)  # the shortest digits that read back as this float, as orjson writes
        if "e" not in text or not math.isfinite(value):
            return value
        return orjson.Fragment(plain(Decimal(text)).encode())
    if isinstance(value, dict):
        return {key: _plain_floats(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_plain_floats(item) for item in value]
    return value
