"""Secrets: password hashing, random tokens, token hashing and the at-rest cipher."""

import asyncio
import base64
import hashlib
import hmac
import secrets

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from cryptography.fernet import Fernet, InvalidToken
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

_hasher = PasswordHasher()
# Checking against this keeps "unknown email" as slow as "wrong password" (no timing leak).
# Made when the cost is set (or on first use), not at import: there it cost every process
# 0.12 s of CPU for a hash at the default cost, which the settings' cost then replaced.
_dummy_hash: str | None = None


def use_password_cost(time_cost: int, memory_kib: int) -> None:
    """The cost of new hashes in this process (PASSWORD_HASH_TIME_COST, _MEMORY_KIB)."""
    global _hasher, _dummy_hash
    if (_hasher.time_cost, _hasher.memory_cost) != (time_cost, memory_kib):
        _hasher = PasswordHasher(time_cost=time_cost, memory_cost=memory_kib)
        _dummy_hash = None
    _dummy()  # ready before the first sign-in, which then takes as long as any other


def _dummy() -> str:
    global _dummy_hash
    if _dummy_hash is None:
        _dummy_hash = _hasher.hash("not-a-real-password")
    return _dummy_hash


def hash_password(password: str) -> str:
    return _hasher.hash(password)


def verify_password(password_hash: str | None, password: str) -> bool:
    """Constant-effort check; a missing hash still costs one argon2 verification."""
    try:
        return _hasher.verify(password_hash or _dummy(), password) and password_hash is not None
    except (VerificationError, InvalidHashError):
        return False


# Argon2 takes tens to hundreds of milliseconds of CPU by design: off the event loop (it
# releases the GIL), so one sign-up does not hold every order and socket of the process.
async def hash_password_in_thread(password: str) -> str:
    return await asyncio.to_thread(hash_password, password)


async def verify_password_in_thread(password_hash: str | None, password: str) -> bool:
    return await asyncio.to_thread(verify_password, password_hash, password)


def new_token(prefix: str = "", nbytes: int = 32) -> str:
    return prefix + secrets.token_urlsafe(nbytes)


def new_hex_key(nbytes: int = 32) -> str:
    """A Binance-looking key: 64 alphanumeric characters."""
    return secrets.token_hex(nbytes)


def token_hash(token: str) -> str:
    """SHA-256 hex: high-entropy tokens need no slow hash, and this allows indexed lookup."""
    return hashlib.sha256(token.encode("utf-8", "surrogateescape")).hexdigest()


def constant_equal(a: str, b: str) -> bool:
    return hmac.compare_digest(a.encode(), b.encode())


class SecretCipher:
    """Fernet encryption with a key derived from the service's SECRET_KEY."""

    def __init__(self, secret_key: str):
        derived = HKDF(
            algorithm=hashes.SHA256(), length=32, salt=b"papertrade", info=b"compat-secrets"
        ).derive(secret_key.encode())
        self._fernet = Fernet(base64.urlsafe_b64encode(derived))
        self._decrypted: dict[str, str] = {}

    def encrypt(self, plaintext: str) -> str:
        return self._fernet.encrypt(plaintext.encode()).decode()

    def decrypt(self, token: str) -> str:
        # Decrypting is the costly part of a signed request's key lookup, and a ciphertext
        # always decrypts to the same secret: remember it.
        plaintext = self._decrypted.get(token)
        if plaintext is None:
            try:
                plaintext = self._fernet.decrypt(token.encode()).decode()
            except InvalidToken as exc:
                raise ValueError("secret cannot be decrypted with this SECRET_KEY") from exc
            if len(self._decrypted) > 10_000:
                self._decrypted.clear()
            self._decrypted[token] = plaintext
        return plaintext
