"""Domain-agnostic helpers: decimals, time, signing."""
