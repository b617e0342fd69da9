"""Settings of the Celery worker the integration test starts: the deployment's settings, with
every Redis key under the test run's own prefix (``ITEST_BROKER_KEYPREFIX``), the one the
test's publishing side uses too, so concurrent test runs on one Redis never share a queue."""

import os

from storefront.config.settings.base import *  # noqa: F403

CELERY_BROKER_TRANSPORT_OPTIONS = {
    **CELERY_BROKER_TRANSPORT_OPTIONS,  # noqa: F405
    "global_keyprefix": os.environ["ITEST_BROKER_KEYPREFIX"],
}
