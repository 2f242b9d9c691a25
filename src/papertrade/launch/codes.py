"""Invitation codes: 8 characters of Crockford base32, kept in upper case (B9)."""

import secrets

ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"  # no I, L, O, U
LENGTH = 8
# What people type for what they read: Crockford's decoding rules.
_READ_AS = str.maketrans({"I": "1", "L": "1", "O": "0"})


def new_code() -> str:
    return "".join(secrets.choice(ALPHABET) for _ in range(LENGTH))


def normalise(text: str) -> str | None:
    """The stored form of a typed code (any case, hyphens and spaces ignored, I/L read as 1 and
    O as 0), or None when it cannot be a code."""
    code = text.replace("-", "").replace(" ", "").upper().translate(_READ_AS)
    if len(code) != LENGTH or any(char not in ALPHABET for char in code):
        return None
    return code
