"""Every consumer of the outbox, in the order they are served (docs/architecture.md, Events).

A domain package declares its consumers in its `consumers.py` and adds them here; there are none
yet (notifications, copy trading, attestation and live mirroring will be the first).
"""

from papertrade.notifications import consumers as notification_consumers
from papertrade.outbox.dispatcher import Consumer

CONSUMERS: tuple[Consumer, ...] = (*notification_consumers.CONSUMERS,)
