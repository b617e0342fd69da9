"""Error tracking, opt-in: ``SENTRY_DSN`` set turns it on (``storefront.config.settings.base``)."""

import os


def sentry_init(*, dsn: str) -> None:
    import sentry_sdk
    from sentry_sdk.integrations.celery import CeleryIntegration
    from sentry_sdk.integrations.django import DjangoIntegration

    sentry_sdk.init(
        dsn=dsn,
        environment=os.environ.get("SENTRY_ENVIRONMENT", "production"),
        release=os.environ.get("SENTRY_RELEASE") or None,
        traces_sample_rate=float(os.environ.get("SENTRY_TRACES_SAMPLE_RATE", "0")),
        # Shoppers' addresses, cookies and bodies stay out of the reports.
        send_default_pii=False,
        integrations=[DjangoIntegration(), CeleryIntegration()],
    )
