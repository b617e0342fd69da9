"""The notices' write (one COPY of text rows on PostgreSQL, ``bulk_create`` elsewhere) stores
every field as given: JSON text as its value, strings with the characters COPY's text format
escapes (backslash, tab, newline, carriage return), non-ASCII names, nulls and floats."""

import json
from types import SimpleNamespace

import pytest
from django.db import connection
from django.utils import timezone

from smartcart.models import OptimizationRun, PriceWatchRun
from smartcart.pricewatch.writes import JsonText, notices_insert
from tests.factories import CartFactory

pytestmark = pytest.mark.django_db

_AWKWARD = 'Tab\there, new\nline, CR\r, back\\slash, "quoted", \\N, Grüße 🚚'


def _fields(name: str, *, increase: int | None) -> dict:
    suggestion = {
        "lines": [{"line_id": 1, "product_name": name, "changed": True}],
        "merchants": [{"merchant_name": name, "free_over": None, "parcels": []}],
        "current_merchants": [],
        "kept_current": False,
    }
    return {
        "cart_version": 3,
        "algorithm": "batch-dp",
        "optimal": True,
        "device": name,
        "current_total": 5000,
        "suggested_total": 4100,
        "savings": 900,
        "suggestion": JsonText(json.dumps(suggestion)),
        "plan": {"price_watch": True, "note": name},
        "problem_size": JsonText('{"lines": 1, "complexity": "12"}'),
        "solve_ms": 0.1 + 0.2,
        "elapsed_ms": 1e-7,
        "price_increase": increase,
    }


def test_notices_are_stored_as_given():
    run = PriceWatchRun.objects.create(route="cpu")
    carts = [CartFactory(), CartFactory()]
    created = [
        (carts[0].pk, _fields(_AWKWARD, increase=None)),
        (carts[1].pk, _fields("plain", increase=250)),
    ]
    meter = SimpleNamespace(queries=0, seconds=0.0)
    notices_insert(run=run, created=created, now=timezone.now(), meter=meter)
    # One COPY on PostgreSQL (the meter counts it); elsewhere Django's wrappers count.
    assert meter.queries == (1 if connection.vendor == "postgresql" else 0)
    stored = {n.cart_id: n for n in OptimizationRun.objects.filter(price_watch_run=run)}
    assert set(stored) == {c.pk for c in carts}
    for cart_id, fields in created:
        notice = stored[cart_id]
        assert notice.source == OptimizationRun.Source.PRICE_WATCH
        assert notice.status == OptimizationRun.Status.DONE
        assert notice.superseded_at is None and notice.attempts == 1
        for key, value in fields.items():
            want = json.loads(value) if isinstance(value, JsonText) else value
            assert getattr(notice, key) == want, key
