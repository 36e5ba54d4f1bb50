"""GM keys: random tokens shown once, stored only as hashes."""

from __future__ import annotations

import hashlib
import hmac
import secrets


def new_key() -> str:
    """A fresh GM key with 192 bits of entropy, URL-safe."""
    return secrets.token_urlsafe(24)


def hash_key(key: str) -> str:
    """SHA-256 is enough here: keys are long random tokens, not passwords."""
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def key_matches(key: str, key_hash: str) -> bool:
    """Constant-time comparison of a presented key with the stored hash."""
    return hmac.compare_digest(hash_key(key), key_hash)
