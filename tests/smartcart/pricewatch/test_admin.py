"""The admin lists price-watch runs with their counts, times and device (read-only)."""

import pytest
from django.urls import reverse

from smartcart.models import PriceWatchRun

pytestmark = pytest.mark.django_db


def test_runs_are_listed_read_only(admin_client):
    PriceWatchRun.objects.create(
        status="done",
        route="gpu",
        device="NVIDIA H200",
        carts_checked=1234,
        carts_improvable=56,
        carts_notified=55,
        duration_ms=812.5,
    )
    page = admin_client.get(reverse("admin:smartcart_pricewatchrun_changelist"))
    assert page.status_code == 200
    text = page.content.decode()
    for shown in ("1234", "56", "55", "812.5", "NVIDIA H200", "GPU queue"):
        assert shown in text
    assert admin_client.get(reverse("admin:smartcart_pricewatchrun_add")).status_code == 403
