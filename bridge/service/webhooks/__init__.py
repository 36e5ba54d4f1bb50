"""Outbound webhooks: a Discord channel mirroring resolved cards, and signed JSON for
automation tools, sent from a persisted outbox (see :mod:`bridge.service.webhooks.outbox`)."""
