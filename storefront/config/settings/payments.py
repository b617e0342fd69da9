"""Money: the payment ledger, refunds and marketplace commission."""

import os

# The marketplace's cut of a package, in basis points (1000 = 10%), for merchants without a
# rate of their own; each package keeps the rate in force when it was placed.
MARKETPLACE_COMMISSION_BPS = int(os.environ.get("MARKETPLACE_COMMISSION_BPS", "1000"))

# A refund the provider refused or did not answer is asked again after
# REFUND_RETRY_BASE_S * 2**(attempts - 1) seconds, at most REFUND_RETRY_MAX_S apart, and
# given up (failed, shown in the admin to retry) after REFUND_MAX_ATTEMPTS.
REFUND_RETRY_BASE_S = int(os.environ.get("REFUND_RETRY_BASE_S", "30"))
REFUND_RETRY_MAX_S = int(os.environ.get("REFUND_RETRY_MAX_S", "3600"))
REFUND_MAX_ATTEMPTS = int(os.environ.get("REFUND_MAX_ATTEMPTS", "12"))

# Merged into CELERY_BEAT_SCHEDULE: refunds whose next attempt is due.
PAYMENT_BEAT_SCHEDULE = {
    "storefront-retry-due-refunds": {
        "task": "storefront.refunds_due_process",
        "schedule": float(os.environ.get("REFUND_SWEEP_EVERY_S", "60")),
    },
}
