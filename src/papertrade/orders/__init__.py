"""Orders: placement, cancellation, queries, and the one function that applies a fill."""
