"""Transactional outbox: follow-up work written in the same transaction as its cause."""
