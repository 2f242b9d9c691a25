"""Every consumer of the outbox, in the order they are served (docs/architecture.md, Events).

A domain package declares its consumers in its `consumers.py` and adds them here; there are none
yet (notifications, copy trading, attestation and live mirroring will be the first).
"""

from papertrade.chain.consumers import CHAIN
from papertrade.live.consumers import MIRROR
from papertrade.outbox.dispatcher import Consumer

CONSUMERS: tuple[Consumer, ...] = (CHAIN, MIRROR)
