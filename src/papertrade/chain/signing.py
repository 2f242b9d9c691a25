"""The service's attestation key (Ed25519): it signs each day's root. Kept like the secret key:
from the setting, or generated once under var_dir (a file only the owner reads)."""

import secrets

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from papertrade.config import Settings, create_once


def attestation_key(settings: Settings) -> Ed25519PrivateKey:
    seed = settings.attestation_key
    if not seed:
        path = settings.var_dir / "attestation_key"
        if not path.exists():
            settings.var_dir.mkdir(parents=True, exist_ok=True)
            create_once(path, secrets.token_hex(32))
        seed = path.read_text().strip()
    try:
        return Ed25519PrivateKey.from_private_bytes(bytes.fromhex(seed))
    except ValueError as exc:
        raise SystemExit("the attestation key must be 64 hex digits (a 32-byte seed)") from exc


def public_hex(key: Ed25519PrivateKey) -> str:
    return key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw).hex()


def signature_holds(public_key_hex: str, message: bytes, signature_hex: str) -> bool:
    try:
        Ed25519PublicKey.from_public_bytes(bytes.fromhex(public_key_hex)).verify(
            bytes.fromhex(signature_hex), message
        )
    except (InvalidSignature, ValueError):
        return False
    return True
