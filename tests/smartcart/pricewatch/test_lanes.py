"""A run's lanes: work on a thread with its own connection (PostgreSQL outside a
transaction), in line otherwise; results and errors reach the caller either way."""

import threading

import pytest
from django.db import connection

from smartcart.models import PriceWatchRun
from smartcart.pricewatch.lanes import Lane
from smartcart.pricewatch.services import _QueryMeter

pytestmark = pytest.mark.django_db


def test_inside_a_transaction_the_work_runs_in_line():
    """Another connection would not see the transaction's rows: no thread then."""
    lane = Lane(meter_factory=_QueryMeter)
    got = lane.submit(threading.get_ident)
    lane.close()
    assert got() == threading.get_ident() and lane.meter is None


@pytest.mark.django_db(transaction=True)
def test_work_on_the_lane_gives_its_result_and_its_error():
    """On PostgreSQL outside a transaction the work runs on the lane's thread (its own
    connection, closed at the end), in order; results and errors reach the caller."""
    threaded = connection.vendor == "postgresql"
    lane = Lane(meter_factory=_QueryMeter)
    assert (lane.meter is not None) == threaded

    def write() -> None:
        PriceWatchRun.objects.create(route="cpu")
        raise ValueError("disk full")

    first = lane.submit(lambda: (threading.get_ident(), PriceWatchRun.objects.count()))
    try:
        failed = lane.submit(write)
        with pytest.raises(ValueError, match="disk full"):
            failed()
    except ValueError:
        assert not threaded  # in line the error comes at once
    counted = lane.submit(PriceWatchRun.objects.count)
    lane.close()
    ident, before = first()
    assert (ident != threading.get_ident()) == threaded
    assert (before, counted()) == (0, 1)
    if threaded:
        assert (
            lane.meter is not None and lane.meter.queries >= 3
        )  # the lane's statements, counted on its meter
