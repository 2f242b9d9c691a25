"""Conditional orders: stop, take-profit and trailing stops that place an order when triggered."""
