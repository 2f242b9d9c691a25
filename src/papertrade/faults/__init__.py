"""What the service does when a part it depends on fails (docs/reliability.md)."""
