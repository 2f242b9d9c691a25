"""Native API keys: created in the web application, shown once, stored as hashes."""
