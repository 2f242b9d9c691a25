"""Portfolios, their wallets and the credentials bound to them."""
