"""The admin's login form when staff need a one-time password (``STAFF_TOTP_REQUIRED``)."""

from django_otp import devices_for_user
from django_otp.admin import OTPAdminAuthenticationForm


class StaffOTPLoginForm(OTPAdminAuthenticationForm):
    """django-otp's admin form, where a user with a single device need not pick it first.

    django-otp asks for an explicit device so that a token is never tried against every
    device (each miss would throttle the others); with one device there is nothing to pick.
    """

    def _chosen_device(self, user):
        device = super()._chosen_device(user)
        if device is not None:
            return device
        devices = list(devices_for_user(user, for_verify=True))
        return devices[0] if len(devices) == 1 else None
