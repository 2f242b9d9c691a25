"""Launch: registration mode, invitation codes and the waitlist (docs/launch.md)."""
