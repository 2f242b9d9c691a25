"""Background jobs on taskiq: queued, scheduled and CPU-heavy work, recorded in the jobs table."""
