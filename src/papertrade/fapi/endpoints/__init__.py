"""The compatible endpoints, one module per area."""
