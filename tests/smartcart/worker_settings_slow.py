"""Settings of a worker whose solver first sleeps ``ITEST_SOLVE_SLEEP_S`` seconds, so a test
can kill it mid-run (``test_worker_killed``). The sleep releases the GIL like a real wait on
a device would not; the lease covers kernels that hold it by never lapsing inside the run's
budget (``smartcart.services.lease``)."""

import os
import time

from celery.signals import task_prerun

from tests.smartcart.worker_settings import *  # noqa: F403


@task_prerun.connect(weak=False)
def _slow_solver(**kwargs) -> None:
    from smartcart import services

    if getattr(services.execute.run_solve, "slowed", False):
        return
    solve = services.execute.run_solve

    def slowed(**solve_kwargs):
        time.sleep(float(os.environ.get("ITEST_SOLVE_SLEEP_S", "0")))
        return solve(**solve_kwargs)

    slowed.slowed = True
    services.execute.run_solve = slowed
