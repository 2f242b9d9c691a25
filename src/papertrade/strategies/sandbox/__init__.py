"""Python strategies run here: one separate, locked-down process per run (see child.py)."""
