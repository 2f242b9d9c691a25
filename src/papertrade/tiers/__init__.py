"""Membership tiers: limits per tier, paid periods from the wallet, the daily AI quota."""
