"""The durable outbox: events written with the change that caused them, delivered after it."""
