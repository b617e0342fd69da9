"""The admin site, with optional one-time passwords for staff (django-otp).

With ``STAFF_TOTP_REQUIRED`` on, the admin's login form also asks for a token from one of the
user's OTP devices (an authenticator app's TOTP device, or a one-time static token), and only
a session verified by a device counts as staff: a password alone, or a shop login, is sent to
the admin's login page. Off (the default, so the demo's accounts work) it is Django's admin.

Adding a device: ``manage.py addstatictoken <username>`` prints a one-time token to sign in
with; then, in the admin, Django OTP > TOTP devices > Add, for that user, and scan the
device's QR code (or type its key) into an authenticator app.
"""

from django.conf import settings
from django.contrib.admin import AdminSite
from django.contrib.admin.apps import AdminConfig


def staff_totp_required() -> bool:
    return bool(getattr(settings, "STAFF_TOTP_REQUIRED", False))


class StaffAdminSite(AdminSite):
    @property
    def login_form(self):  # type: ignore[override]
        if not staff_totp_required():
            return None
        # Imported here: this module is loaded with the app registry, before any models.
        from storefront.security.otp_forms import StaffOTPLoginForm

        return StaffOTPLoginForm

    @property
    def login_template(self):  # type: ignore[override]
        return "otp/admin111/login.html" if staff_totp_required() else None

    def login(self, request, extra_context=None):
        from storefront.security.form_limits import login_rate_limited

        return login_rate_limited(super().login)(request, extra_context)

    def has_permission(self, request) -> bool:
        if not super().has_permission(request):
            return False
        return not staff_totp_required() or request.user.is_verified()


class StaffAdminConfig(AdminConfig):
    """``django.contrib.admin`` with ``StaffAdminSite`` as ``admin.site``."""

    default_site = "storefront.security.admin_site.StaffAdminSite"
