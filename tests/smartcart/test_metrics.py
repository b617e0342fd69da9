import pytest

from tests.carts import cart_with_choices
from tests.factories import TEST_PASSWORD

pytestmark = pytest.mark.django_db


def test_metrics_show_optimization_outcomes(client):
    cart = cart_with_choices()
    client.login(username=cart.owner.username, password=TEST_PASSWORD)
    assert client.post("/api/v1/cart/optimizations/", {}, content_type="application/json")
    text = client.get("/metrics").content.decode()
    assert 'smartcart_optimization_runs_total{algorithm="' in text
    assert 'route="inline",status="done"} 1.0' in text
    assert "smartcart_optimization_latency_seconds_bucket{" in text
    assert "smartcart_optimization_solve_seconds_sum{" in text
