"""A user's USDT credit wallet: balance, ledger, transfers with the user's own portfolios."""
