import json
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from smartcart import batch_queue


class Command(BaseCommand):
    help = (
        "Price-watch-shaped batch jobs through the gpu queue: N synthetic carts cut "
        "into jobs, each solved by whichever gpu worker takes it (workers started with "
        "-I smartcart.batch_queue); jobs/s, carts/s, round-trip p50/p95, answers compared "
        "with a reference pass (--digests)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--carts", type=int, default=1_000_000, help="Carts in all.")
        parser.add_argument("--jobs", type=int, default=20, help="Jobs they are cut into.")
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument(
            "--in-flight",
            type=int,
            default=0,
            help="Jobs queued or running at once (a new one per reply); 0: all at once.",
        )
        parser.add_argument("--queue", default="gpu")
        parser.add_argument("--label", default="")
        parser.add_argument("--dir", type=Path, default=Path("/tmp/smartcart-batch-queue"))
        parser.add_argument(
            "--digests",
            type=Path,
            default=None,
            help="Answers' digests per job: compared with when the file exists, else written.",
        )
        parser.add_argument("--timeout-s", type=float, default=120.0)
        parser.add_argument("--json", type=Path, default=None, help="Also write the summary.")

    def handle(self, *args, **options) -> None:
        if not settings.REDIS_URL:
            raise CommandError("REDIS_URL must name the broker the gpu workers serve")
        paths = batch_queue.jobs_write(
            directory=options["dir"],
            n_carts=options["carts"],
            n_jobs=options["jobs"],
            seed=options["seed"],
        )
        label = options["label"] or f"{options['carts']} carts / {options['jobs']} jobs"
        run = batch_queue.queue_run(
            paths=paths,
            label=label,
            in_flight=options["in_flight"] or len(paths),
            queue=options["queue"],
            timeout_s=options["timeout_s"],
        )
        digests: Path | None = options["digests"]
        reference = None
        if digests is not None and digests.exists():
            reference = {int(k): v for k, v in json.loads(digests.read_text()).items()}
        elif digests is not None:
            digests.write_text(json.dumps(run.digests()))
        summary = run.summary(reference)
        summary["in_flight"] = options["in_flight"] or len(paths)
        text = json.dumps(summary)
        if options["json"]:
            options["json"].write_text(text)
        self.stdout.write(text)
