"""The ledger: the one way a balance changes."""
