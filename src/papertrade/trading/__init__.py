"""The pure trading kernel: no I/O, no ORM, no web framework."""
