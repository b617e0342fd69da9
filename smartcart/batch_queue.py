"""Price-watch-shaped batch jobs through the ``gpu`` queue, for the multi-GPU bench.

A price-watch run reads the affected carts, solves them in one batch and writes the answers.
Here the carts are synthetic (:func:`gpu_engine.batch.synthetic_batch`), cut into
jobs of contiguous carts and stored once as ``.npz`` files on the host (the stand-in for the
database read: a worker loads its job's arrays, timed as ``load_ms``), so a run measures the
queue and the solve, not the generator. One job = one message naming its file; the worker
solves it with the batch engine (on its GPU in a ``gpu`` worker) and pushes a small reply
(worker, device, times, a SHA-256 of every total and every line's choice) onto a Redis list
named by the run. The project has no result backend; the list is this bench's own.

The task is not autodiscovered (it is no shop work): the bench's workers load it with
``celery ... worker -I smartcart.batch_queue``. ``manage.py bench_batch_queue`` drives it.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import statistics
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from celery import shared_task
from django.conf import settings

from gpu_engine.batch import PackedBatch, slice_batch, solve_packed, synthetic_batch

REPLY_TTL_S = 3600


def jobs_write(*, directory: Path, n_carts: int, n_jobs: int, seed: int) -> list[Path]:
    """``n_jobs`` files of contiguous carts of one synthetic batch (kept when already there,
    since the same seed gives the same carts)."""
    directory.mkdir(parents=True, exist_ok=True)
    paths = [directory / f"carts{n_carts}-seed{seed}-job{j}of{n_jobs}.npz" for j in range(n_jobs)]
    if all(p.exists() for p in paths):
        return paths
    batch = synthetic_batch(n_carts, seed=seed)
    cuts = np.linspace(0, n_carts, n_jobs + 1).astype(np.int64)
    for j, path in enumerate(paths):
        share = slice_batch(batch, int(cuts[j]), int(cuts[j + 1]))
        tmp = path.with_suffix(".tmp.npz")
        np.savez(tmp, **{name: getattr(share, name) for name in PackedBatch.__dataclass_fields__})
        tmp.replace(path)
    return paths


def job_load(path: str | Path) -> PackedBatch:
    with np.load(path) as data:
        return PackedBatch(**{name: data[name] for name in PackedBatch.__dataclass_fields__})


def answers_digest(total: np.ndarray, choice: np.ndarray) -> str:
    """Equal digests = equal totals and equal choices, every cart and every line."""
    digest = hashlib.sha256(np.ascontiguousarray(total, dtype=np.int64).tobytes())
    digest.update(np.ascontiguousarray(choice, dtype=np.int64).tobytes())
    return digest.hexdigest()


def job_solve(*, job: int, path: str, reply_key: str, worker: str) -> dict[str, Any]:
    """Load, solve (``SMARTCART_BATCH_QUEUE_DEVICE``, default auto: the GPU when there is
    one), digest, reply."""
    t0 = time.perf_counter()
    batch = job_load(path)
    t1 = time.perf_counter()
    answers = solve_packed(batch, device=os.environ.get("SMARTCART_BATCH_QUEUE_DEVICE", "auto"))
    t2 = time.perf_counter()
    reply = {
        "job": job,
        "worker": worker,
        "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES", ""),
        "device": answers.device,
        "carts": batch.n_carts,
        "load_ms": (t1 - t0) * 1e3,
        "solve_ms": (t2 - t1) * 1e3,
        "digest": answers_digest(answers.total, answers.choice),
    }
    _redis().rpush(reply_key, json.dumps(reply))
    _redis().expire(reply_key, REPLY_TTL_S)
    return reply


@shared_task(name="smartcart.batch_queue_solve", acks_late=True, ignore_result=True, bind=True)
def batch_queue_solve_task(self, job: int, path: str, reply_key: str) -> None:
    job_solve(
        job=job,
        path=path,
        reply_key=reply_key,
        worker=self.request.hostname or socket.gethostname(),
    )


_client: list = []


def _redis():
    if not _client:
        import redis

        _client.append(redis.Redis.from_url(settings.REDIS_URL))
    return _client[0]


@dataclass
class QueueRun:
    """One pass of jobs through the queue, as the driver saw it."""

    label: str
    replies: list[dict[str, Any]] = field(default_factory=list)
    wall_s: float = 0.0

    def summary(self, reference: dict[int, str] | None = None) -> dict[str, Any]:
        trips = sorted(r["round_trip_ms"] for r in self.replies)
        carts = sum(r["carts"] for r in self.replies)
        per_worker: dict[str, int] = {}
        for r in self.replies:
            key = f"{r['worker']}[{r['cuda_visible_devices']}]"
            per_worker[key] = per_worker.get(key, 0) + 1
        out: dict[str, Any] = {
            "label": self.label,
            "jobs": len(self.replies),
            "carts": carts,
            "wall_s": round(self.wall_s, 3),
            "jobs_per_s": round(len(self.replies) / self.wall_s, 1) if self.wall_s else None,
            "carts_per_s": round(carts / self.wall_s) if self.wall_s else None,
            "round_trip_p50_ms": round(_quantile(trips, 0.5), 1),
            "round_trip_p95_ms": round(_quantile(trips, 0.95), 1),
            "solve_ms_sum": round(sum(r["solve_ms"] for r in self.replies), 1),
            "load_ms_sum": round(sum(r["load_ms"] for r in self.replies), 1),
            "devices": sorted({r["device"] for r in self.replies}),
            "jobs_per_worker": per_worker,
        }
        if reference is not None:
            out["same_answers_as_reference"] = all(
                reference.get(r["job"]) == r["digest"] for r in self.replies
            ) and len(self.replies) == len(reference)
        return out

    def digests(self) -> dict[int, str]:
        return {r["job"]: r["digest"] for r in self.replies}


def _quantile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[round(q * 100) - 1]


def queue_run(
    *,
    paths: list[Path],
    label: str,
    in_flight: int,
    queue: str = "gpu",
    timeout_s: float = 120.0,
) -> QueueRun:
    """Send every job (at most ``in_flight`` waiting or running at once: a new one as each
    reply comes back) and collect the replies; round trip = send to reply, on this clock."""
    reply_key = f"batch-queue:{uuid.uuid4().hex}"
    client = _redis()
    run = QueueRun(label=label)
    pending = list(enumerate(paths))
    sent: dict[int, float] = {}
    t0 = time.perf_counter()
    while len(run.replies) < len(paths):
        while pending and len(sent) < max(1, in_flight):
            job, path = pending.pop(0)
            sent[job] = time.perf_counter()
            batch_queue_solve_task.apply_async(
                args=(job, str(path.resolve()), reply_key), queue=queue
            )
        item = client.blpop([reply_key], timeout=timeout_s)
        if item is None:
            raise TimeoutError(f"{label}: no reply in {timeout_s} s ({len(run.replies)} back)")
        reply = json.loads(item[1])
        reply["round_trip_ms"] = (time.perf_counter() - sent.pop(reply["job"])) * 1e3
        run.replies.append(reply)
    run.wall_s = time.perf_counter() - t0
    client.delete(reply_key)
    return run
