"""Celery: the broker (Redis, else in-process), task defaults and the beat schedule."""

import os

from storefront.config.settings.env import REDIS_URL

# --- Celery -------------------------------------------------------------------------------
CELERY_BROKER_URL = REDIS_URL or "memory://"
# No Redis: run tasks in-process, the embedded default. Results live in the database,
# so no result backend is configured.
CELERY_TASK_ALWAYS_EAGER = not REDIS_URL
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TASK_IGNORE_RESULT = True
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_TIME_LIMIT = int(os.environ.get("CELERY_TASK_TIME_LIMIT", "120"))
CELERY_TASK_SOFT_TIME_LIMIT = int(os.environ.get("CELERY_TASK_SOFT_TIME_LIMIT", "90"))
CELERY_TASK_DEFAULT_QUEUE = "cpu"
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# A message whose worker died hard is redelivered after this long. It must stay above the
# longest task time limit (a feed import, OFFER_IMPORT_TIME_LIMIT_S), or Redis would hand a
# running task to a second worker. A lost optimisation run does not wait for it: its lease
# lapses within seconds (smartcart.services.lease; README, "Failures and retries").
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": int(os.environ.get("CELERY_VISIBILITY_TIMEOUT", "3900")),
}
# Keep a worker's database connection across tasks: a fresh PostgreSQL connection per job
# would double the queue path's latency. The task drops broken or aged connections itself.
CELERY_DB_REUSE_MAX = int(os.environ.get("CELERY_DB_REUSE_MAX", "1000"))
CELERY_BEAT_SCHEDULE = {
    "smartcart-reap-stuck-optimization-runs": {
        "task": "smartcart.optimization_runs_reap",
        # Cheap (indexed, running and queued runs only) and frequent: a lapsed lease is
        # recovered within seconds even when nobody polls the run.
        "schedule": float(os.environ.get("SMARTCART_REAP_EVERY_S", "5")),
    },
    "storefront-purge-idempotency-keys": {
        "task": "storefront.idempotency_keys_purge",
        "schedule": 3600.0,
    },
    "storefront-outbox-relay": {
        "task": "storefront.outbox_relay",
        "schedule": float(os.environ.get("OUTBOX_RELAY_EVERY_S", "5")),
        # A relay run that waited out an outage in the queue is as good as the next one.
        "options": {"expires": float(os.environ.get("OUTBOX_RELAY_EVERY_S", "5"))},
    },
    "storefront-purge-outbox-messages": {
        "task": "storefront.outbox_messages_purge",
        "schedule": 3600.0,
    },
    "storefront-expire-unpaid-orders": {
        "task": "storefront.orders_unpaid_expire",
        "schedule": 60.0,
    },
}
