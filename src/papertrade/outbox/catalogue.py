"""Every consumer of the outbox, in the order they are served (docs/architecture.md, Events).

A domain package declares its consumers in its `consumers.py` and adds them here.
"""

from papertrade.chain.consumers import CHAIN
from papertrade.live.consumers import MIRROR
from papertrade.notifications import consumers as notification_consumers
from papertrade.outbox.dispatcher import Consumer

CONSUMERS: tuple[Consumer, ...] = (*notification_consumers.CONSUMERS, CHAIN, MIRROR)
