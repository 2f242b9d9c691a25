"""Every consumer of the outbox, in the order they are served (docs/architecture.md, Events).

A domain package declares its consumers in its `consumers.py` and adds them here.
"""

from collections.abc import Callable

from papertrade.chain.consumers import CHAIN
from papertrade.context import AppContext
from papertrade.copytrading import consumers as copy_consumers
from papertrade.copytrading import funding as copy_funding
from papertrade.live.consumers import MIRROR
from papertrade.mail.waitlist import waitlist_mail_consumer
from papertrade.notifications import consumers as notification_consumers
from papertrade.outbox.dispatcher import Consumer
from papertrade.subscriptions import consumers as subscription_consumers

CONSUMERS: tuple[Consumer, ...] = (
    CHAIN,
    MIRROR,
    subscription_consumers.SIGNALS,
    subscription_consumers.STRATEGY_SIGNALS,
    copy_funding.FUNDING,
)

# Consumers that need the running process (a venue to place orders on, the public address the
# links point to), built with its context. A consumer given to create_app under one of their
# names replaces it (a test's slowed-down inbox).
CONTEXT_CONSUMERS: tuple[Callable[[AppContext], Consumer], ...] = (
    notification_consumers.inbox_consumer,
    copy_consumers.mirror_consumer,
    waitlist_mail_consumer,
)
