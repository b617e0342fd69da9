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


@pytest.mark.django_db(transaction=True)
def test_with_a_broker_the_bench_waits_for_the_job_on_the_routes_queue(monkeypatch):
    """Queued mode: the feed's commit sends the task to the ``gpu`` queue; the bench waits for
    the run a worker finishes and says where it ran (here a stand-in worker: the task run
    in-process when it is sent, as a worker would take it from the queue)."""
    from smartcart.pricewatch import services
    from smartcart.pricewatch.tasks import price_watch_run_task
    from storefront.config.celery import app

    sent = []

    def deliver(*, kwargs, countdown, queue):
        sent.append((queue, countdown, kwargs["route"]))
        services.price_watch_run(route=kwargs["route"])

    monkeypatch.setattr(price_watch_run_task, "apply_async", deliver)
    eager = app.conf.task_always_eager
    app.conf.task_always_eager = False
    out = io.StringIO()
    try:
        call_command(
            "bench_price_watch",
            carts=30,
            products=40,
            merchants=6,
            share=0.5,
            route="gpu",
            countdown=0.5,
            wait=30,
            stdout=out,
        )
    finally:
        app.conf.task_always_eager = eager
    text = out.getvalue()
    assert sent[0] == ("gpu", 0.5, "gpu")
    assert "mode: queued to the workers" in text
    assert "ran: on a worker of the gpu queue" in text and "carts/s" in text
    run = PriceWatchRun.objects.filter(carts_checked__gt=0).get()
    assert run.route == "gpu" and run.device == "cpu"  # no GPU here: the CPU twin
