import pytest

from smartcart import warmup


@pytest.mark.parametrize(
    ("argv", "environ", "expected"),
    [
        (["/venv/bin/gunicorn", "storefront.config.wsgi"], {}, True),
        (["manage.py", "runserver"], {"RUN_MAIN": "true"}, True),
        (["manage.py", "runserver"], {}, False),  # the autoreloader's watcher
        (["manage.py", "runserver", "--noreload"], {}, True),
        (["manage.py", "migrate"], {}, False),
        (["/venv/bin/pytest", "tests"], {}, False),
        (["/venv/bin/celery", "-A", "storefront", "worker"], {}, False),
        ([], {}, False),
    ],
)
def test_only_web_servers_warm_up_at_start(argv, environ, expected):
    assert warmup.is_web_server_process(argv, environ) is expected


def test_not_under_tests():
    assert warmup.web_warmup_start() is False


@pytest.fixture
def fresh_process(monkeypatch):
    """A process that has not warmed up yet, whose warm-ups only record that they ran."""
    calls = []
    monkeypatch.setattr(warmup, "engine_warmup", lambda kind="cpu": calls.append(kind))
    monkeypatch.setattr(warmup, "_done", set())
    return calls


class _Queue:
    def __init__(self, name):
        self.name = name


def _consumer(pool, *queues):
    class TaskConsumer:
        pass

    class Consumer:
        pass

    consumer = Consumer()
    consumer.pool = pool
    consumer.task_consumer = TaskConsumer()
    consumer.task_consumer.queues = [_Queue(name) for name in queues]
    return consumer


def test_solo_gpu_worker_warms_cpu_and_gpu_once_before_its_first_job(fresh_process):
    from celery.concurrency.solo import TaskPool

    pool = TaskPool()  # sends worker_process_init, which starts the cpu warm-up thread
    warmup.on_worker_ready(sender=_consumer(pool, "gpu"))
    assert fresh_process == ["cpu", "gpu"]


def test_solo_cpu_worker_never_touches_the_gpu(fresh_process):
    from celery.concurrency.solo import TaskPool

    warmup.on_worker_ready(sender=_consumer(TaskPool(), "cpu"))
    assert fresh_process == ["cpu"]


def test_prefork_parent_never_warms_up(fresh_process):
    from celery.concurrency.prefork import TaskPool

    warmup.on_worker_ready(sender=_consumer(TaskPool.__new__(TaskPool), "cpu", "gpu"))
    assert fresh_process == []


def test_prefork_child_warms_the_cpu_solvers_in_a_thread(fresh_process):
    warmup.on_worker_process_init()
    warmup.engine_warmup_once("cpu")  # waits for the thread
    assert fresh_process == ["cpu"]


def test_cpu_warmup_runs_every_cpu_solver_without_cuda(monkeypatch):
    import gpu_engine.device

    def no_cuda():
        raise AssertionError("the CPU warm-up asked for CUDA")

    monkeypatch.setattr(gpu_engine.device, "gpu_available", no_cuda)
    timings = warmup.cpu_warmup()
    assert "planner" in timings
    assert not any(name.startswith("gpu") for name in timings)
    assert {"cpu-full", "cpu-dp"} <= set(timings)


def test_engine_warmup_logs_failures_instead_of_raising(monkeypatch, caplog):
    def broken():
        raise RuntimeError("no driver")

    monkeypatch.setitem(warmup.WARMUPS, "gpu", broken)
    warmup.engine_warmup("gpu")
    assert "warm-up failed" in caplog.text


def test_worker_start_gives_the_job_thread_its_share_of_host_threads(fresh_process, monkeypatch):
    """GPU_ENGINE_HOST_THREADS is applied where the worker starts, in the thread that runs its
    jobs (numba's count is per thread; a fresh thread stands in for the worker's)."""
    import threading

    import numba

    monkeypatch.setenv("GPU_ENGINE_HOST_THREADS", "1")
    seen = []

    def start():
        warmup.on_worker_process_init()
        seen.append(numba.get_num_threads())

    thread = threading.Thread(target=start)
    thread.start()
    thread.join()
    warmup.engine_warmup_once("cpu")
    assert seen == [1]


def test_a_gpu_worker_warms_the_catalog_kernels_its_settings_send_to_the_gpu(monkeypatch, settings):
    calls = []
    monkeypatch.setattr(
        "gpu_engine.catalog.cheapest_offers_warmup",
        lambda *, device: calls.append(("cheapest", device)),
    )
    monkeypatch.setattr(
        "storefront.catalog.zone_index.zone_index_warmup",
        lambda *, device: calls.append(("zones", device)),
    )
    settings.STOREFRONT_CHEAPEST_QUEUE, settings.STOREFRONT_CHEAPEST_DEVICE = "cpu", "cpu"
    settings.STOREFRONT_ZONE_INDEX_DEVICE = "cpu"
    assert warmup.catalog_gpu_warmup() == {} and calls == []
    settings.STOREFRONT_CHEAPEST_QUEUE, settings.STOREFRONT_CHEAPEST_DEVICE = "gpu", "gpu"
    settings.STOREFRONT_ZONE_INDEX_DEVICE = "auto"
    assert set(warmup.catalog_gpu_warmup()) == {"cheapest-gpu", "zone-index-gpu"}
    assert calls == [("cheapest", "gpu"), ("zones", "auto")]
