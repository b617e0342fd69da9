"""The multi-GPU queue bench's jobs (issue 17): job files hold contiguous carts of one synthetic
batch, a job's reply carries the digest of its answers (equal to the same carts solved in one
batch), and the driver's summary compares every job with a reference pass."""

import json

import numpy as np

from gpu_engine.batch import solve_packed
from gpu_engine.batch.synthetic import synthetic_batch
from smartcart import batch_queue


class FakeRedis:
    def __init__(self):
        self.lists: dict[str, list[bytes]] = {}

    def rpush(self, key, value):
        self.lists.setdefault(key, []).append(value)

    def expire(self, key, seconds):
        pass


def test_job_files_cut_one_batch_and_replies_digest_its_answers(tmp_path, monkeypatch):
    fake = FakeRedis()
    monkeypatch.setattr(batch_queue, "_redis", lambda: fake)
    paths = batch_queue.jobs_write(directory=tmp_path, n_carts=90, n_jobs=4, seed=2)
    assert batch_queue.jobs_write(directory=tmp_path, n_carts=90, n_jobs=4, seed=2) == paths
    batch = synthetic_batch(90, seed=2)
    whole = solve_packed(batch, device="cpu")
    lo = 0
    for job, path in enumerate(paths):
        reply = batch_queue.job_solve(job=job, path=str(path), reply_key="k", worker="w1")
        hi = lo + reply["carts"]
        lines = slice(int(batch.line_ptr[lo]), int(batch.line_ptr[hi]))
        assert reply["device"] == "cpu" and reply["load_ms"] >= 0
        assert reply["digest"] == batch_queue.answers_digest(
            whole.total[lo:hi], whole.choice[lines]
        )
        lo = hi
    assert lo == 90
    assert [json.loads(v)["job"] for v in fake.lists["k"]] == [0, 1, 2, 3]


def test_summary_counts_workers_and_compares_with_the_reference():
    run = batch_queue.QueueRun(label="two workers", wall_s=2.0)
    for job in range(10):
        run.replies.append(
            {
                "job": job,
                "worker": f"gpu{job % 2}",
                "cuda_visible_devices": str(job % 2),
                "device": "gpu",
                "carts": 100,
                "load_ms": 1.0,
                "solve_ms": 3.0,
                "digest": f"d{job}",
                "round_trip_ms": float(job + 1),
            }
        )
    summary = run.summary(run.digests())
    assert summary["jobs_per_s"] == 5.0 and summary["carts_per_s"] == 500
    assert summary["jobs_per_worker"] == {"gpu0[0]": 5, "gpu1[1]": 5}
    assert summary["round_trip_p95_ms"] > summary["round_trip_p50_ms"]
    assert summary["same_answers_as_reference"]
    assert not run.summary({**run.digests(), 3: "other"})["same_answers_as_reference"]
    assert np.isnan(batch_queue.QueueRun(label="none").summary()["round_trip_p50_ms"])
