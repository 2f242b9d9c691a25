"""ws surface."""
