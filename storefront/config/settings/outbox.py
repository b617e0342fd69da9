"""The transactional outbox's relay."""
