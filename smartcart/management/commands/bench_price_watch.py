import cProfile
import io
import os
import platform
import pstats
import time

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser
from django.db import connection

from gpu_engine import warmup
from smartcart.pricewatch import benchmark
from smartcart.pricewatch.bench_copy import market_create_copy


class Command(BaseCommand):
    help = (
        "Price watch end to end: N open bench carts, a feed changing a share of the prices, "
        "then the whole price-watch job (in-process without a broker, else on the workers "
        "of the route's queue): carts/s, queries per cart, DB and solver time per cart, "
        "end-to-end time, where it ran. Use a database of its own (PostgreSQL)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--carts", type=int, default=10_000)
        parser.add_argument("--products", type=int, default=5_000)
        parser.add_argument("--merchants", type=int, default=60)
        parser.add_argument("--max-lines", type=int, default=8, help="Lines per cart: 2 to this.")
        parser.add_argument(
            "--max-offers", type=int, default=8, help="Offers per product: 2 to this."
        )
        parser.add_argument("--share", type=float, default=0.1, help="Share of offers repriced.")
        parser.add_argument("--seed", type=int, default=14)
        parser.add_argument("--keep", action="store_true", help="Keep the bench rows.")
        parser.add_argument(
            "--reuse",
            action="store_true",
            help="Reuse the bench market a --keep run left (its notices and recorded changes "
            "deleted first; the feed moves the prices again from where they stand).",
        )
        parser.add_argument(
            "--fast-setup",
            action="store_true",
            help="Write the market with COPY from NumPy draws (PostgreSQL; for a million "
            "carts; the same shape, not the same draws as the default setup).",
        )
        parser.add_argument(
            "--profile",
            metavar="PATH",
            default="",
            help="cProfile the feed and the job (in-process) into PATH and print the top "
            "functions by own time.",
        )
        parser.add_argument(
            "--route",
            choices=("cpu", "gpu", "auto"),
            default="cpu",
            help="The queue the job goes to with a broker: cpu, gpu (SMARTCART_GPU_QUEUE on "
            "in this process), auto (the settings decide). In-process: the solver device "
            "(gpu: the batch on the GPU when there is one).",
        )
        parser.add_argument(
            "--wait", type=float, default=540.0, help="With a broker: seconds to wait for it."
        )
        parser.add_argument(
            "--countdown",
            type=float,
            default=1.0,
            help="With a broker: the burst's countdown (SMARTCART_PRICE_WATCH_COUNTDOWN_S).",
        )

    def handle(self, *args, **options) -> None:
        from storefront.config.celery import app

        queued = not app.conf.task_always_eager
        if options["route"] != "auto":
            settings.SMARTCART_GPU_QUEUE = options["route"] == "gpu"
        settings.SMARTCART_PRICE_WATCH = True
        settings.SMARTCART_PRICE_WATCH_COUNTDOWN_S = options["countdown"]
        if not queued:
            warmup(include_gpu=options["route"] == "gpu")
        self.stdout.write(
            f"mode: {'queued to the workers (broker)' if queued else 'in-process (no broker)'}"
        )
        t0 = time.perf_counter()
        market = benchmark.market_reuse() if options["reuse"] else None
        if market is None:
            benchmark.market_delete()
            create = market_create_copy if options["fast_setup"] else benchmark.market_create
            market = create(
                carts=options["carts"],
                products=options["products"],
                merchants=options["merchants"],
                max_lines=options["max_lines"],
                max_offers=options["max_offers"],
                seed=options["seed"],
            )
        self.stdout.write(f"setup: {market} in {time.perf_counter() - t0:.1f} s")
        profiler = cProfile.Profile() if options["profile"] else None
        try:
            if profiler is not None:
                profiler.enable()
            outcome = benchmark.feed_apply(
                share=options["share"],
                seed=options["seed"],
                wait_s=options["wait"] if queued else 0,
            )
            if profiler is not None:
                profiler.disable()
                profiler.dump_stats(options["profile"])
                text = io.StringIO()
                stats = pstats.Stats(options["profile"], stream=text)
                stats.sort_stats("tottime").print_stats(25)
                stats.sort_stats("cumulative").print_stats(45)
                self.stdout.write(text.getvalue())
            self._report(market, outcome, queued=queued, countdown=options["countdown"])
        finally:
            if not options["keep"]:
                benchmark.market_delete()

    def _report(self, market, outcome, *, queued: bool, countdown: float) -> None:
        run = outcome.run
        checked = max(run.carts_checked, 1)
        self.stdout.write(
            f"ran: on a worker of the {run.route} queue (sent {countdown:g} s after the "
            "feed's commit: end to end includes that countdown and the queue)"
            if queued
            else f"ran: in-process (no broker), route {run.route}"
        )
        self.stdout.write(
            f"database: {connection.vendor} {connection.settings_dict.get('NAME')}; "
            f"host: {platform.node()} ({platform.processor() or platform.machine()}); "
            f"solver: {run.device or '-'} (route {run.route})"
        )
        self.stdout.write(
            f"feed: {outcome.offers_changed} offers repriced in {outcome.feed_s:.2f} s"
        )
        self.stdout.write(
            f"run {run.pk} ({run.status}): carts checked {run.carts_checked}, skipped "
            f"{run.carts_skipped}, improvable {run.carts_improvable}, price up "
            f"{run.carts_price_up}, notified {run.carts_notified}"
        )
        rate = run.carts_checked / (run.duration_ms / 1000)
        self.stdout.write(
            f"job: {run.duration_ms / 1000:.2f} s = {rate:.0f} carts/s; "
            f"end to end (feed + job) {outcome.end_to_end_s:.2f} s, of which this process "
            f"was on a CPU {outcome.cpu_s:.2f} s"
            f"{' (it only waited: the job ran on the worker)' if queued else ''}; "
            f"load average {os.getloadavg()[0]:.1f}"
        )
        rest = run.duration_ms - run.db_ms - run.solve_ms
        self.stdout.write(
            f"per cart: {run.queries / checked:.4f} queries ({run.queries} in all), DB "
            f"{run.db_ms / checked:.3f} ms, solve {run.solve_ms / checked:.3f} ms, "
            + (
                f"rest {rest / checked:.3f} ms (Python: reading rows, packing, building the "
                "notices)"
                if rest >= 0
                # The reads and writes of other chunks run on lanes beside the computation.
                else "the DB time overlaps the computation (reader and writer lanes)"
            )
        )
