"""The accounts' Celery task: the password-reset mail (a thin wrapper)."""

from celery import shared_task

from storefront.accounts import services as accounts
from storefront.config.celery import MAIL_TASK_OPTIONS


@shared_task(name="storefront.password_reset_mail_send", **MAIL_TASK_OPTIONS)
def password_reset_mail_send_task(
    email: str, domain: str, use_https: bool, link_valid_for: str
) -> None:
    """Mails the reset link (``password_reset_mail_send``). Takes the address, not a token:
    the worker makes the token, so no secret sits in the broker."""
    accounts.password_reset_mail_send(
        email=email,
        domain=domain,
        use_https=use_https,
        extra_context={"link_valid_for": link_valid_for},
    )
