#!/usr/bin/env python3
"""Verifies a Frontdesk webhook delivery with nothing but Python's standard library.

    python3 verify_webhook.py <secret> '<X-Service-Signature value>' <file with the raw request body>

Exits 0 when the signature is genuine and fresh, 1 otherwise. In a receiver, call `verify(...)` with the secret of
the subscription, the header and the raw body bytes exactly as they arrived (before any JSON parsing).
"""
import hashlib
import hmac
import sys
import time

TOLERANCE_SECONDS = 300  # refuse replays of old deliveries


def verify(secret: str, signature_header: str, raw_body: bytes, now: float | None = None) -> bool:
    parts = dict(item.split("=", 1) for item in signature_header.split(",") if "=" in item)
    timestamp, received = parts.get("t", ""), parts.get("v1", "")
    # Refuse anything malformed or of the wrong size before comparing.
    if not timestamp.isdigit() or len(received) != 64:
        return False
    if abs((now if now is not None else time.time()) - int(timestamp)) > TOLERANCE_SECONDS:
        return False
    expected = hmac.new(secret.encode(), timestamp.encode() + b"." + raw_body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, received)  # constant time


if __name__ == "__main__":
    secret, header, body_path = sys.argv[1:4]
    with open(body_path, "rb") as body:
        sys.exit(0 if verify(secret, header, body.read()) else 1)
