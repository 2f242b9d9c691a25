"""A TCP proxy the test controls, between the service and PostgreSQL (or Redis): cut it to make
the server unreachable (every connection through it breaks, new ones are refused), freeze it to
make the server hang (connections stay open, nothing comes back), restore it to bring it back.
`break_on_commit_after` breaks one connection right after it passed a COMMIT on to the server,
before the answer comes back: a commit whose outcome the service cannot know."""

import asyncio
import contextlib
import socket


class TcpProxy:
    def __init__(self, target_host: str, target_port: int):
        self.target = (target_host, target_port)
        self.port = 0
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self.up = True
        self.relaying = asyncio.Event()  # cleared: frozen, nothing is relayed
        self.relaying.set()
        self.commit_marker: bytes | None = None  # see break_on_commit_after
        self.broken_commits = 0

    async def start(self) -> None:
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", self.port))
        self.port = sock.getsockname()[1]
        self._server = await asyncio.start_server(self._serve, sock=sock)

    async def stop(self) -> None:
        self.cut()
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    def cut(self) -> None:
        """The database goes away: live connections break, new ones are closed at once."""
        self.up = False
        for writer in list(self._writers):
            writer.transport.abort()
        self._writers.clear()

    def restore(self) -> None:
        self.up = True
        self.relaying.set()

    def freeze(self) -> None:
        """The server hangs: connections stay open and nothing they send gets an answer."""
        self.relaying.clear()

    def break_on_commit_after(self, marker: bytes) -> None:
        """The next connection that sends `marker` (e.g. b"INSERT INTO orders") and then COMMIT
        has the COMMIT delivered and the connection broken before the answer returns."""
        self.commit_marker = marker

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if not self.up:
            writer.transport.abort()
            return
        await self.relaying.wait()
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.target)
        except OSError:
            writer.transport.abort()
            return
        self._writers.update((writer, up_writer))
        state = {"marked": False, "mute": False}
        await asyncio.gather(
            self._pump(reader, up_writer, writer, state, watch=True),
            self._pump(up_reader, writer, up_writer, state, watch=False),
            return_exceptions=True,
        )
        for each in (writer, up_writer):
            self._writers.discard(each)
            each.transport.abort()

    async def _pump(
        self,
        source: asyncio.StreamReader,
        sink: asyncio.StreamWriter,
        other: asyncio.StreamWriter,
        state: dict[str, bool],
        *,
        watch: bool,
    ) -> None:
        with contextlib.suppress(OSError, ConnectionError):
            while data := await source.read(65536):
                await self.relaying.wait()
                if state["mute"]:
                    return  # the server's answer to the broken COMMIT never arrives
                if watch and self.commit_marker is not None:
                    state["marked"] = state["marked"] or self.commit_marker in data
                    if state["marked"] and b"COMMIT" in data:
                        self.commit_marker = None
                        self.broken_commits += 1
                        state["mute"] = True
                        sink.write(data)
                        await sink.drain()
                        await asyncio.sleep(0.3)  # the server commits; its answer is lost
                        sink.transport.abort()
                        other.transport.abort()
                        return
                sink.write(data)
                await sink.drain()
        sink.transport.abort()
