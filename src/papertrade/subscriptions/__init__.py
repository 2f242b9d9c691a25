"""Signal subscriptions to public portfolios: free and paid tiers (docs/subscriptions.md)."""
