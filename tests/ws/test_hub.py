"""Units of the fan-out: channel names, frames, coalesced writes."""

import asyncio

import pytest
from websockets.frames import Frame, Opcode
from websockets.streams import StreamReader

from papertrade.ws.channels import ChannelError, channel_for_event, parse
from papertrade.ws.client import Client
from papertrade.ws.frames import native_data, text_frame
from papertrade.ws.hub import Hub


@pytest.mark.parametrize(
    ("name", "canonical"),
    [
        ("mark_price:btcusdt", ["mark_price:BTCUSDT"]),
        ("mark_price", ["mark_price"]),
        ("ticker:ethusdt", ["ticker:ETHUSDT"]),
        ("kline:BTCUSDT:1h", ["kline:BTCUSDT:1h"]),
        ("orders:12", ["orders:12"]),
        ("orders", ["orders"]),
        ("portfolio:7", ["orders:7", "positions:7", "balance:7", "signals:7"]),
    ],
)
def test_channel_names(name: str, canonical: list[str]) -> None:
    assert [c.name for c in parse(name)] == canonical


@pytest.mark.parametrize("name", ["", "trades:BTCUSDT", "kline:BTCUSDT", "orders:x", "ticker", 3])
def test_bad_channel_names_say_how_to_write_them(name: object) -> None:
    with pytest.raises(ChannelError) as caught:
        parse(name)
    assert caught.value.message


def test_events_map_to_channels() -> None:
    assert channel_for_event("order.filled") == "orders"
    assert channel_for_event("position.liquidated") == "positions"
    assert channel_for_event("balance.changed") == "balance"
    assert channel_for_event("signal.executed") == "signals"
    assert channel_for_event("funding.settled") is None


def test_money_has_six_decimals_and_other_numbers_stay_exact() -> None:
    from decimal import Decimal

    data = native_data(
        {"balance": Decimal("10.12345678"), "quantity": Decimal("0.00012345"), "id": 3}
    )
    assert data == {"balance": 10.123457, "quantity": 0.00012345, "id": 3}


@pytest.mark.parametrize("size", [0, 125, 126, 65_535, 65_536, 200_000])
def test_frames_parse_as_rfc6455_text_frames(size: int) -> None:
    payload = b"x" * size
    reader = StreamReader()
    reader.feed_data(text_frame(payload))
    parser = Frame.parse(reader.read_exact, mask=False)
    try:
        next(parser)
    except StopIteration as done:
        frame = done.value
    assert frame.opcode is Opcode.TEXT and frame.fin and frame.data == payload


class _Socket:
    def __init__(self) -> None:
        self.sent: list[str] = []

    async def send_text(self, text: str) -> None:
        self.sent.append(text)


async def test_messages_published_within_flush_ms_go_out_in_one_write() -> None:
    # A wide window, so that a busy machine's slow 5 ms sleeps still fall inside it.
    hub = Hub(flush_ms=400)
    socket = _Socket()
    client = Client(socket, max_buffer=1 << 20, direct=False)  # type: ignore[arg-type]
    hub.attach(client)
    hub.subscribe(client, "mark_price:BTCUSDT")
    hub.flush_now()  # the window starts now
    for n in range(3):
        hub.publish("mark_price:BTCUSDT", b'{"n": %d}' % n)
        await asyncio.sleep(0.005)
    assert hub.writes == 0  # still inside the window
    deadline = asyncio.get_running_loop().time() + 5
    while hub.writes == 0:
        assert asyncio.get_running_loop().time() < deadline, "the window never flushed"
        await asyncio.sleep(0.02)
    assert hub.writes == 1
    await asyncio.sleep(0)
    assert socket.sent == ['{"n": 0}', '{"n": 1}', '{"n": 2}']
    hub.detach(client)
