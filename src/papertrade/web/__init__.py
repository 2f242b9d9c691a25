"""web surface."""
