import json

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from smartcart.benchmark import percentile
from tests.factories import MerchantFactory, OfferFactory, ProductFactory


def test_percentile_is_nearest_rank():
    values = [float(v) for v in range(1, 101)]
    assert percentile(values, 50) == 50
    assert percentile(values, 95) == 95
    assert percentile(values, 100) == 100
    assert percentile([7.0], 95) == 7


@pytest.mark.django_db
def test_inline_series_runs_through_the_api_and_cleans_up(tmp_path, capsys):
    merchants = [MerchantFactory() for _ in range(3)]
    for index in range(6):
        product = ProductFactory()
        for merchant in merchants:
            OfferFactory(product=product, merchant=merchant, unit_price=1000 + 10 * index)
    out = tmp_path / "bench.json"
    call_command(
        "bench_optimize",
        "--series",
        "inline",
        "--runs",
        "3",
        "--warmup",
        "1",
        "--json",
        str(out),
    )
    report = json.loads(out.read_text())
    series = report["series"][0]
    assert series["runs"] == 3 and series["failures"] == []
    assert sum(series["routes"].values()) == 3
    assert all(route.startswith("inline/") for route in series["routes"])
    assert series["stats_ms"]["round_trip"]["p95"] > 0
    assert "round_trip" in capsys.readouterr().out
    assert not get_user_model().objects.filter(username__startswith="bench-optimize-").exists()


@pytest.mark.django_db
def test_queued_series_needs_a_broker():
    with pytest.raises(CommandError, match="REDIS_URL"):
        call_command("bench_optimize", "--series", "queued", "--runs", "1")
