"""Optional one-time passwords for staff (django-otp, ``STAFF_TOTP_REQUIRED``): off, the admin
takes a password as before; on, it also takes a token from one of the user's devices, and a
session no device verified is not staff."""

import pytest
from django.core.management import call_command
from django_otp.oath import TOTP
from django_otp.plugins.otp_static.models import StaticDevice
from django_otp.plugins.otp_totp.models import TOTPDevice

from tests.factories import TEST_PASSWORD, UserFactory

pytestmark = pytest.mark.django_db

LOGIN = "/admin/login/"


@pytest.fixture
def staff(db):
    return UserFactory(username="ops", is_staff=True, is_superuser=True)


def _admin_login(client, **fields):
    data = {"username": "ops", "password": TEST_PASSWORD, "next": "/admin/", **fields}
    return client.post(LOGIN, data)


def _current_token(device: TOTPDevice) -> str:
    otp = TOTP(device.bin_key, device.step, device.t0, device.digits, device.drift)
    return f"{otp.token():0{device.digits}d}"


def test_off_by_default_a_password_is_enough(client, staff, settings):
    settings.STAFF_TOTP_REQUIRED = False
    assert _admin_login(client)["Location"] == "/admin/"
    assert client.get("/admin/").status_code == 200


def test_on_a_password_alone_is_refused(client, staff, settings):
    settings.STAFF_TOTP_REQUIRED = True
    TOTPDevice.objects.create(user=staff, name="phone")
    response = _admin_login(client)
    assert response.status_code == 200  # the form again, with an error
    assert "otp_token" in response.content.decode()
    assert client.get("/admin/").status_code == 302


def test_on_a_wrong_token_is_refused(client, staff, settings):
    settings.STAFF_TOTP_REQUIRED = True
    TOTPDevice.objects.create(user=staff, name="phone")
    assert _admin_login(client, otp_token="000000").status_code == 200
    assert client.get("/admin/").status_code == 302


def test_on_the_authenticator_apps_token_lets_staff_in(client, staff, settings):
    settings.STAFF_TOTP_REQUIRED = True
    device = TOTPDevice.objects.create(user=staff, name="phone")
    assert _admin_login(client, otp_token=_current_token(device))["Location"] == "/admin/"
    assert client.get("/admin/").status_code == 200


def test_on_a_shop_login_is_not_an_admin_session(client, staff, settings):
    settings.STAFF_TOTP_REQUIRED = True
    TOTPDevice.objects.create(user=staff, name="phone")
    client.post("/accounts/login/", {"username": "ops", "password": TEST_PASSWORD})
    assert "_auth_user_id" in client.session
    assert client.get("/admin/")["Location"].startswith(LOGIN)


def test_addstatictoken_gives_a_first_sign_in_once(client, staff, settings, capsys):
    settings.STAFF_TOTP_REQUIRED = True
    call_command("addstatictoken", "ops")
    token = capsys.readouterr().out.strip()
    assert StaticDevice.objects.filter(user=staff).exists()
    assert _admin_login(client, otp_token=token)["Location"] == "/admin/"
    assert client.get("/admin/storefront/").status_code in {200, 302}
    client.logout()
    assert _admin_login(client, otp_token=token).status_code == 200  # used up


def test_on_a_user_with_two_devices_picks_one(client, staff, settings):
    settings.STAFF_TOTP_REQUIRED = True
    phone = TOTPDevice.objects.create(user=staff, name="phone")
    TOTPDevice.objects.create(user=staff, name="tablet")
    assert _admin_login(client, otp_token=_current_token(phone)).status_code == 200
    picked = _admin_login(client, otp_device=phone.persistent_id, otp_token=_current_token(phone))
    assert picked["Location"] == "/admin/"


def test_on_wrong_passwords_still_lock_the_account_out(client, staff, settings):
    settings.STAFF_TOTP_REQUIRED = True
    settings.AXES_FAILURE_LIMIT = 3
    device = TOTPDevice.objects.create(user=staff, name="phone")
    codes = [_admin_login(client, password="wrong").status_code for _ in range(4)]
    assert codes == [200, 200, 429, 429]
    assert _admin_login(client, otp_token=_current_token(device)).status_code == 429


def test_admin_shows_a_new_devices_key_as_a_qr_code(admin_client, admin_user):
    device = TOTPDevice.objects.create(user=admin_user, name="phone")
    base = f"/admin/otp_totp/totpdevice/{device.pk}"
    assert admin_client.get(f"{base}/config/").status_code == 200
    image = admin_client.get(f"{base}/qrcode/")
    assert image.status_code == 200
    assert image["Content-Type"] == "image/svg+xml"
    assert b"<svg" in image.content
