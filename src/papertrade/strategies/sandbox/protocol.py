"""The frames a strategy's process and the server exchange over its pipes.

The server hands the process one bar at a time and waits for its answer before the next, so the
process never holds a bar it has not reached (no look-ahead, whatever its code reaches for).

server → process: a header (length-prefixed JSON), then per bar the packed float64 values
`time open high low close volume` followed by the current value of each indicator the strategy
asked for, in the order it asked; EOF after the last bar. An indicator request is answered with
its values up to the current bar (a count, then the values) or a refusal (-1, then a message).

process → server: per bar `.` (no orders) or `I` + a JSON list of orders; `N` + JSON asks for an
indicator; `R` + JSON ends the run (`{"ok": …, "error": …, "printed": …}`). Every length is a
little-endian uint32 and no frame may exceed MAX_FRAME: anything else breaks the protocol and
fails the run.
"""

import struct

BAR_FIELDS = ("time", "open", "high", "low", "close", "volume")
LENGTH = struct.Struct("<I")
COUNT = struct.Struct("<i")
MAX_FRAME = 1 << 20  # bytes of one JSON frame either way
MAX_INDICATORS = 32  # indicator columns one run may ask for (a bar frame stays under PIPE_BUF)

DONE = b"."  # this bar: no orders
ORDERS = b"I"  # this bar: these orders
INDICATOR = b"N"  # give me this indicator's values so far
RESULT = b"R"  # the run is over


def frame(tag: bytes, payload: bytes) -> bytes:
    return tag + LENGTH.pack(len(payload)) + payload


def bar_format(indicators: int) -> struct.Struct:
    return struct.Struct(f"<{len(BAR_FIELDS) + indicators}d")
