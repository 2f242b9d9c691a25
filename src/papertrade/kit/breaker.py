"""Skip Redis for a moment after it failed, so a Redis that hangs costs one timeout per second
rather than one per request (each caller then uses its fallback at once)."""

import time

PAUSE_S = 1.0


class Breaker:
    def __init__(self, pause_s: float = PAUSE_S) -> None:
        self.pause_s = pause_s
        self._until = 0.0

    def allows(self) -> bool:
        return time.monotonic() >= self._until

    def failed(self) -> None:
        self._until = time.monotonic() + self.pause_s
