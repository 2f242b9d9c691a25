"""webhooks surface."""
