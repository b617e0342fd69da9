"""Compile every kernel a request or a cpu worker can reach, before any server starts.

Numba writes what it compiles to its on-disk cache, so the web processes started afterwards
load the kernels instead of compiling them (``make demo`` and the production start run this
before the server; see ``smartcart.warmup``).
"""

from django.core.management.base import BaseCommand, CommandError

from smartcart.warmup import cpu_warmup


class Command(BaseCommand):
    help = "Compile (or load from Numba's cache) the solver, catalog and zone-index kernels."

    def handle(self, *args, **options) -> None:
        try:
            timings = cpu_warmup()
        except Exception as error:
            raise CommandError(f"warm-up failed: {error}") from error
        total = sum(timings.values())
        detail = ", ".join(f"{name} {seconds:.2f} s" for name, seconds in timings.items())
        self.stdout.write(f"Kernels ready in {total:.1f} s ({detail}).")
