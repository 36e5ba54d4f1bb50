"""Signing of the generic JSON webhook: HMAC-SHA256 with the webhook's secret over
``"<timestamp>." + raw body``, so the timestamp is signed too and a captured request
can't be replayed outside the window.

A receiver checks (see README, "Verifying a JSON webhook"):
1. ``X-Fate-Bridge-Timestamp`` is within ``REPLAY_WINDOW_SECONDS`` of its clock;
2. ``X-Fate-Bridge-Signature`` equals ``"sha256=" + hex(HMAC_SHA256(secret, ts + "." + body))``,
   compared in constant time over the raw bytes received (before any JSON parsing);
3. optionally, that ``X-Fate-Bridge-Delivery`` is new (retries resend the same id).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

SIGNATURE_HEADER = "X-Fate-Bridge-Signature"
TIMESTAMP_HEADER = "X-Fate-Bridge-Timestamp"
DELIVERY_HEADER = "X-Fate-Bridge-Delivery"
REPLAY_WINDOW_SECONDS = 300


def new_secret() -> str:
    """A signing secret with 256 bits of entropy."""
    return "whsec_" + secrets.token_urlsafe(32)


def sign(secret: str, timestamp: int, body: bytes) -> str:
    """The signature header's value for ``body`` sent at ``timestamp`` (Unix seconds)."""
    mac = hmac.new(secret.encode("utf-8"), f"{timestamp}.".encode() + body, hashlib.sha256)
    return "sha256=" + mac.hexdigest()


def verify(
    secret: str,
    body: bytes,
    timestamp: str | None,
    signature: str | None,
    now: float,
    window: float = REPLAY_WINDOW_SECONDS,
) -> bool:
    """Whether a received request is authentic and fresh; False for any missing or
    malformed header, a stale or future timestamp, or a wrong signature."""
    if not timestamp or not signature or not timestamp.isdigit():
        return False
    sent = int(timestamp)
    if abs(now - sent) > window:
        return False
    return hmac.compare_digest(sign(secret, sent, body), signature)
