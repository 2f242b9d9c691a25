"""Positions, leverage and the cross-margin account summary."""
