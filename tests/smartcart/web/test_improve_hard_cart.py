"""Improve cart on the cart that crashed HiGHS (issue 25: ``highs-segfault-9e7``, rows of 9e7
cents): the request gets an answer, whichever route solves it, and the process lives on."""

import json
from pathlib import Path

import pytest
from django.test import override_settings
from django.urls import reverse

from smartcart.models import OptimizationRun
from tests.carts import cart_from_problem

pytestmark = pytest.mark.django_db

REPRO = Path(__file__).resolve().parents[2] / "gpu_engine" / "repro"
OPTIMUM = 45_794_863


@pytest.mark.slow
@pytest.mark.parametrize(
    ("inline_max_ms", "route"), [(10_000, "inline"), (0, "cpu")]
)  # solved in the request, or by the (in-process) queue
def test_improve_cart_answers_the_cart_that_crashed_highs(
    client, django_capture_on_commit_callbacks, inline_max_ms, route
):
    cart = cart_from_problem(json.loads((REPRO / "highs-segfault-9e7.json").read_text()))
    client.force_login(cart.owner)
    with (
        override_settings(SMARTCART_INLINE_MAX_MS=inline_max_ms),
        django_capture_on_commit_callbacks(execute=True),  # the queued task runs here
    ):
        response = client.post(reverse("cart_improve"))
    assert response.status_code == 302
    run = OptimizationRun.objects.latest("created_at", "id")
    assert (run.status, run.route) == ("done", route), run.error
    assert run.suggested_total == OPTIMUM
    assert "You can save" in client.get(reverse("cart")).content.decode()
