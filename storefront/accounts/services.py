"""Account writes that run outside a request: API tokens revoked, the password-reset mail."""

from storefront.errors import ValidationFailed


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
