"""Issue 15, "first product page after make demo": no kernel is compiled inside a request.

``manage.py warmup`` (run by ``make demo`` and the production start before the server)
compiles every kernel a request can reach, the zone index's included, and a web server
process finishes its warm-up before it serves (it was a background thread racing the first
request: 27 s for the first product page of a new clone).
"""

import pytest
from django.core.management import call_command
from numba.core.dispatcher import Dispatcher

from smartcart import warmup
from tests.factories import MerchantFactory, OfferFactory, ProductFactory, ShippingZoneFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def compilations(monkeypatch):
    """Every Numba compile (or cache load) from here on, by function name."""
    seen: list[str] = []
    compile_ = Dispatcher.compile

    def counting(self, sig):
        seen.append(self.py_func.__qualname__)
        return compile_(self, sig)

    monkeypatch.setattr(Dispatcher, "compile", counting)
    return seen


@pytest.mark.slow
def test_after_warmup_a_product_page_compiles_nothing(client, compilations, capsys):
    call_command("warmup")
    assert "Kernels ready" in capsys.readouterr().out
    compilations.clear()
    product = ProductFactory()
    for prefix in ("", "10", "75"):
        merchant = MerchantFactory()
        ShippingZoneFactory(merchant=merchant, postal_prefix=prefix)
        OfferFactory(product=product, merchant=merchant)
    from storefront.catalog.zone_index import zone_index_invalidate

    zone_index_invalidate()
    session = client.session
    session.save()
    response = client.get(f"/products/{product.slug}/")
    assert response.status_code == 200
    client.post("/cart/destination/", {"postal_code": "10115", "next": "/"})
    assert client.get(f"/products/{product.slug}/").status_code == 200
    assert compilations == []


def test_a_web_server_process_is_warm_before_it_serves(monkeypatch):
    calls = []
    monkeypatch.setattr(warmup, "is_web_server_process", lambda: True)
    monkeypatch.setattr(warmup, "warmup_enabled", lambda: True)
    monkeypatch.setattr(warmup, "WARMUPS", {warmup.CPU: lambda: calls.append("cpu") or {}})
    monkeypatch.setattr(warmup, "_done", set())
    assert warmup.web_warmup_start() is True
    # Done when it returns: the server binds (or the worker accepts) only afterwards.
    assert calls == ["cpu"]
    assert warmup.CPU in warmup._done
