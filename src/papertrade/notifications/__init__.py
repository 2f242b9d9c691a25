"""Notifications: the in-app inbox, fed by the durable outbox, and each user's channel choices."""
