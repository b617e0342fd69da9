"""Accounts: a password reset asked for (rate limited, the mail sent by a worker), the mail
itself, and API tokens revoked."""

import hashlib

from storefront.enqueue import task_enqueue_on_commit
from storefront.errors import ValidationFailed
from storefront.security.ratelimit import window_retry_after


def user_api_tokens_revoke(*, user) -> int:
    """Revokes every API token of ``user`` (mobile clients must sign in again), as after a
    password reset: a token obtained with the old password must not outlive it. Returns how
    many were revoked."""
    from rest_framework.authtoken.models import Token

    deleted, _ = Token.objects.filter(user=user).delete()
    return deleted


def password_reset_mail_send(
    *, email: str, domain: str, use_https: bool, extra_context: dict | None = None
) -> None:
    """Mails a reset link to every active account with ``email`` (none: nothing happens),
    through Django's own ``PasswordResetForm`` and token generator, the link pointing at
    ``domain`` (the host the shopper asked from). Runs in a worker: the request that asked for
    it answers the same way, in the same time, whether the address has an account or not."""
    from django.contrib.auth.forms import PasswordResetForm

    form = PasswordResetForm({"email": email})
    if not form.is_valid():
        raise ValidationFailed(f"Not an e-mail address: {email!r}.", field="email")
    # Without the sites framework Django names the site after the request's host: the same.
    form.save(
        domain_override=domain,
        use_https=use_https,
        email_template_name="registration/password_reset_email.txt",
        extra_email_context=extra_context,
    )


# Every reset request may send an e-mail. (requests, window seconds) per client address, and
# per e-mail address entered: the address limit counts addresses with and without an account
# alike, so being limited tells nothing about who has an account. It keeps a stranger from
# flooding someone's inbox with reset links from many client addresses.
RESET_LIMIT_PER_CLIENT = (10, 15 * 60)
RESET_LIMIT_PER_ADDRESS = (3, 15 * 60)


def _reset_retry_after(*, client: str, email: str) -> int | None:
    limits = (
        (f"client:{client}", RESET_LIMIT_PER_CLIENT),
        (f"address:{email.strip().casefold()}", RESET_LIMIT_PER_ADDRESS),
    )
    for ident, (allowed, window_s) in limits:
        # Hashed: client idents (X-Forwarded-For) and e-mail addresses are not safe cache keys.
        digest = hashlib.sha256(ident.encode()).hexdigest()[:32]
        retry_after = window_retry_after(
            key=f"storefront:password-reset:{digest}",
            allowed=allowed,
            window_s=window_s,
            on_outage="closed",
        )
        if retry_after is not None:
            return retry_after
    return None


def password_reset_request(
    *, email: str, client: str, domain: str, use_https: bool, link_valid_for: str
) -> int | None:
    """Asks a worker to mail a reset link to ``email`` once the transaction commits, unless
    ``client`` (``storefront.security.client_ip``: trusted proxies only) or the address asked
    too often: then the seconds to wait, and nothing is sent. The worker looks the address up
    and makes the token, so the request does the same work for every address (its time cannot
    tell which ones have an account) and no secret sits in the broker."""
    retry_after = _reset_retry_after(client=client, email=email)
    if retry_after is None:
        task_enqueue_on_commit(
            "storefront.password_reset_mail_send", args=[email, domain, use_https, link_valid_for]
        )
    return retry_after
