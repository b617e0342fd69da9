"""Prometheus metrics of Improve cart, read from the runs themselves at each scrape.

Runs finish in web processes (inline) and in workers of every host; counting them where they
finish would need a shared multiprocess registry. The ``OptimizationRun`` rows already hold
route, algorithm, status and latency, so one grouped query per scrape gives exact totals:
runs by route/algorithm/outcome, and latency histograms (``elapsed_ms``, request to answer,
and ``solve_ms``, the solver alone) by route and algorithm.
"""

from typing import cast

from django.db.models import Count, Q, Sum
from prometheus_client.core import CounterMetricFamily, HistogramMetricFamily
from prometheus_client.registry import REGISTRY, Collector

from smartcart.models import OptimizationRun

BUCKETS_S = (0.005, 0.025, 0.1, 0.25, 1.0, 2.5, 10.0, 60.0)
_FINISHED = (OptimizationRun.Status.DONE, OptimizationRun.Status.FAILED)


def _families():
    runs = CounterMetricFamily(
        "smartcart_optimization_runs",
        "Finished Improve-cart runs by route, algorithm and outcome.",
        labels=["route", "algorithm", "status"],
    )
    latency = {
        field: HistogramMetricFamily(
            f"smartcart_optimization_{name}_seconds", help_text, labels=["route", "algorithm"]
        )
        for field, name, help_text in (
            ("elapsed_ms", "latency", "Improve-cart latency, request to answer."),
            ("solve_ms", "solve", "Solver time of Improve-cart runs."),
        )
    }
    return runs, latency


def _aggregates(field: str) -> dict:
    buckets = {
        f"le{i}": Count("id", filter=Q(**{f"{field}__lte": bound * 1000}))
        for i, bound in enumerate(BUCKETS_S)
    }
    return {
        f"{field}_n": Count("id", filter=Q(**{f"{field}__isnull": False})),
        f"{field}_sum": Sum(field),
        **{f"{field}_{key}": value for key, value in buckets.items()},
    }


class OptimizationRunCollector(Collector):
    def describe(self):
        runs, latency = _families()
        return [runs, *latency.values()]

    def collect(self):
        runs, latency = _families()
        rows = (
            OptimizationRun.objects.filter(status__in=_FINISHED)
            .values("route", "algorithm", "status")
            .annotate(n=Count("id"), **_aggregates("elapsed_ms"), **_aggregates("solve_ms"))
            .order_by()
        )
        merged: dict[tuple[str, str], dict[str, float]] = {}
        for row in rows:
            algorithm = row["algorithm"] or "none"
            runs.add_metric([row["route"], algorithm, row["status"]], row["n"])
            into = merged.setdefault((row["route"], algorithm), {})
            for key, value in row.items():
                if key.startswith(("elapsed_ms", "solve_ms")):
                    # Counts and sums of the row's aggregates (None: no run had the field).
                    into[key] = into.get(key, 0.0) + float(cast(float | None, value) or 0)
        for (route, algorithm), sums in merged.items():
            for field, family in latency.items():
                cumulative = [
                    (str(bound), sums[f"{field}_le{i}"]) for i, bound in enumerate(BUCKETS_S)
                ]
                cumulative.append(("+Inf", sums[f"{field}_n"]))
                family.add_metric(
                    [route, algorithm], cumulative, sum_value=sums[f"{field}_sum"] / 1000
                )
        yield runs
        yield from latency.values()


_registered = False


def metrics_register() -> None:
    global _registered
    if not _registered:
        REGISTRY.register(OptimizationRunCollector())
        _registered = True
