"""``manage.py bench_price_watch`` runs end to end (tiny sizes: a smoke test, not a timing)."""

import io

import pytest
from django.core.management import call_command

from smartcart.models import PriceWatchRun
from storefront.models import Cart, Product


@pytest.mark.django_db(transaction=True)
def test_bench_price_watch_reports_the_job_and_cleans_up():
    out = io.StringIO()
    call_command("bench_price_watch", carts=30, products=40, merchants=6, share=0.5, stdout=out)
    text = out.getvalue()
    assert "carts/s" in text and "queries" in text
    # The feed's run (deleting the bench rows afterwards is a change too: runs with no cart).
    run = PriceWatchRun.objects.get(carts_checked__gt=0)
    assert run.status == "done" and run.carts_notified > 0
    assert not Cart.objects.exists() and not Product.objects.exists()
