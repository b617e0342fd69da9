from django.core.management.base import BaseCommand

from smartcart.services import optimization_runs_reap


class Command(BaseCommand):
    help = (
        "Marks optimization runs failed that are stuck in running past the task time limit "
        "(their worker was lost) or queued past SMARTCART_QUEUED_MAX_S (their message was lost). "
        "The same job runs periodically as the Celery task smartcart.optimization_runs_reap."
    )

    def handle(self, *args, **options) -> None:
        count = optimization_runs_reap()
        self.stdout.write(f"Marked {count} stuck optimization run(s) failed.")
