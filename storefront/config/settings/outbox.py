"""The transactional outbox's relay: how often it runs, how it backs off, what it keeps."""

import os

# The relay (a beat task with a broker; in-process without one) sends what is due this often.
OUTBOX_RELAY_EVERY_S = float(os.environ.get("OUTBOX_RELAY_EVERY_S", "5"))
OUTBOX_RELAY_BATCH = int(os.environ.get("OUTBOX_RELAY_BATCH", "100"))
# A message being sent is left to its sender this long; past it (the sender died between the
# commit and the send), the relay sends it again. Above the longest in-process task.
OUTBOX_CLAIM_S = float(os.environ.get("OUTBOX_CLAIM_S", "300"))
# Retries back off exponentially from the first delay up to the cap.
OUTBOX_RETRY_FIRST_S = float(os.environ.get("OUTBOX_RETRY_FIRST_S", "2"))
OUTBOX_RETRY_MAX_S = float(os.environ.get("OUTBOX_RETRY_MAX_S", "300"))
# Handler errors (tasks run in-process) give up after this many tries; a broker that is down
# is waited for however long it takes.
OUTBOX_MAX_ATTEMPTS = int(os.environ.get("OUTBOX_MAX_ATTEMPTS", "10"))
# Delivered messages are purged after this long.
OUTBOX_RETENTION_S = float(os.environ.get("OUTBOX_RETENTION_S", str(7 * 24 * 3600)))
