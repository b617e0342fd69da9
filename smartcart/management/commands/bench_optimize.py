import json
import os
import platform
import random
import signal
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connection
from django.test import override_settings
from django.utils import timezone

from smartcart import benchmark
from storefront.config.celery import app

REPORTED_OPTIONS = frozenset(
    {"runs", "warmup", "lines", "inline_lines", "seed", "poll_ms", "spawn_worker", "worker_pool"}
)
WORKER_READY_S = 120
WORKER_STOP_S = 30


class Command(BaseCommand):
    help = (
        "Improve-cart round trip: N sequential optimizations of fresh carts through the API "
        "(queued ones through the real broker and a worker), with the DB / queue / solve "
        "breakdown. Needs a seeded catalog (seed_demo); for the queued series REDIS_URL and a "
        "worker on the cpu queue (--spawn-worker starts one: prefork, concurrency 1)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--runs", type=int, default=200, help="Recorded runs per series.")
        parser.add_argument("--warmup", type=int, default=10, help="Unrecorded runs first.")
        parser.add_argument("--lines", type=int, default=10, help="Lines of the queued carts.")
        parser.add_argument("--inline-lines", type=int, default=3)
        parser.add_argument(
            "--series",
            choices=["inline", "queued", "auto", "all"],
            default="all",
            help="inline: --inline-lines carts as routed (inline when predicted within "
            "SMARTCART_INLINE_MAX_MS); queued: --lines carts forced through the queue; auto: "
            "--lines carts as the planner routes them; all (default): the three.",
        )
        parser.add_argument("--seed", type=int, default=7)
        parser.add_argument(
            "--poll-ms", type=float, default=5.0, help="How often to look for the answer."
        )
        parser.add_argument("--spawn-worker", action="store_true")
        parser.add_argument(
            "--worker-pool",
            choices=["prefork", "solo"],
            default="prefork",
            help="Pool of the spawned worker (prefork like `make worker-cpu`; concurrency 1).",
        )
        parser.add_argument("--json", type=Path, help="Also write the results here.")

    def handle(self, *args, **options) -> None:
        if options["series"] in ("queued", "all") and app.conf.task_always_eager:
            raise CommandError("The queued series needs REDIS_URL (a real broker and worker).")
        rng = random.Random(options["seed"])
        benchmark.bench_users_delete()
        try:
            results = self._run(options, rng)
        finally:
            benchmark.bench_users_delete()
        self.stdout.write(benchmark.table(results))
        if options["json"]:
            options["json"].write_text(json.dumps(self._report(results, options), indent=2))

    def _run(self, options, rng: random.Random) -> list[benchmark.Series]:
        count = options["runs"] + options["warmup"]
        results = []
        wanted = options["series"]
        specs = [
            (f"inline {options['inline_lines']}-line", options["inline_lines"], False, "inline"),
            (f"queued {options['lines']}-line", options["lines"], True, "queued"),
            (f"auto {options['lines']}-line", options["lines"], False, "auto"),
        ]
        specs = [spec for spec in specs if wanted in (spec[3], "all")]
        prepared = []
        for name, lines, force_queue, label in specs:
            self.stderr.write(f"Preparing {count} carts of {lines} lines for {name}...")
            tokens = benchmark.carts_create(count=count, lines=lines, rng=rng, label=label)
            prepared.append((name, tokens, force_queue))
        spawn = options["spawn_worker"] and wanted in ("queued", "auto", "all")
        with self._worker(spawn, pool=options["worker_pool"]):
            for name, tokens, force_queue in prepared:
                self.stderr.write(f"Running {name}...")
                # Forcing the queue: an inline limit of 0 sends every run to a worker.
                limit = 0 if force_queue else settings.SMARTCART_INLINE_MAX_MS
                with override_settings(SMARTCART_INLINE_MAX_MS=limit):
                    series = benchmark.series_run(
                        name,
                        tokens,
                        warmup=options["warmup"],
                        poll_ms=options["poll_ms"],
                        progress=self.stderr.write,
                    )
                results.append(series)
        return results

    @contextmanager
    def _worker(self, spawn: bool, *, pool: str):
        if not spawn:
            yield
            return
        command = [
            str(Path(sys.executable).with_name("celery")),
            "-A",
            "storefront",
            "worker",
            "-Q",
            "cpu",
            f"--pool={pool}",
            "--concurrency=1",
            "--prefetch-multiplier=1",
            "--without-gossip",
            "--without-mingle",
            "--without-heartbeat",
            "-n",
            f"bench-{os.getpid()}@%h",
            "--loglevel=INFO",
        ]
        log_path = Path(tempfile.gettempdir()) / f"bench-optimize-worker-{os.getpid()}.log"
        with log_path.open("wb") as log:
            process = subprocess.Popen(
                command,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        try:
            deadline = time.monotonic() + WORKER_READY_S
            while "ready." not in log_path.read_text(errors="replace"):
                if process.poll() is not None or time.monotonic() > deadline:
                    raise CommandError(f"The worker did not start:\n{log_path.read_text()}")
                time.sleep(0.2)
            yield
        finally:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
                try:
                    process.wait(timeout=WORKER_STOP_S)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait(timeout=WORKER_STOP_S)
            log_path.unlink(missing_ok=True)

    def _report(self, results: list[benchmark.Series], options) -> dict:
        return {
            "date": timezone.now().isoformat(),
            "host": platform.node(),
            "cpus": os.cpu_count(),
            # Load at the end of the run: others' work on a shared machine shows here.
            "load_average": os.getloadavg(),
            # Celery closes a worker's DB connection around every task unless this is set.
            "celery_db_reuse_max": app.conf.get("CELERY_DB_REUSE_MAX"),
            "database": connection.vendor,
            "broker": "eager" if app.conf.task_always_eager else "redis",
            "options": {k: str(v) for k, v in options.items() if k in REPORTED_OPTIONS},
            "series": [
                {
                    "name": series.name,
                    "runs": len(series.samples),
                    "failures": series.failures[:20],
                    "routes": series.routes(),
                    "stats_ms": series.stats(),
                }
                for series in results
            ],
        }
