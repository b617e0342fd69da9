"""``python -m gpu_engine bench --suite batch_mix`` at a tiny size: the engine rows with and
without the pruning agree, every shape bucket has a row, the checked sample has no mismatch,
and the version 2 rows come with their check."""

import json
import subprocess
import sys

import numpy as np
import pytest

from gpu_engine.batch.mix import MAX_LINES, MAX_MARKET, MIN_LINES, mix_batch, take_carts

pytestmark = pytest.mark.slow


def test_batch_mix_suite_runs_and_its_sample_agrees(tmp_path):
    path = tmp_path / "rows.json"
    args = [
        "--batch-mix-sizes",
        "400",
        "--batch-mix-unpruned",
        "cpu",
        "--batch-mix-check-share",
        "0.05",
        "--batch-mix-v2-carts",
        "30",
    ]
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "gpu_engine",
            "bench",
            "--suite",
            "batch_mix",
            *args,
            "--json",
            path,
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    rows = json.loads(path.read_text())
    assert not [row for row in rows if "error" in row]
    engine = {row["solver"]: row for row in rows if row["solver"].startswith("cpu-twin")}
    assert engine["cpu-twin"]["same_totals_as_reference"]
    assert engine["cpu-twin unpruned"]["same_totals_as_reference"]
    shapes = [row for row in rows if row["solver"] == "shape cpu"]
    assert sum(row["carts"] for row in shapes) == 400
    check = next(row for row in rows if row["solver"] == "check vs per-cart exact DP")
    assert check["checked"] == 20 and check["mismatches"] == 0
    v2 = next(row for row in rows if row["solver"] == "v2 check vs per-cart planner")
    assert v2["agree"] == v2["checked"]


def test_the_mix_is_deterministic_and_in_its_ranges():
    a, b = mix_batch(500, seed=3), mix_batch(500, seed=3)
    for name in ("line_ptr", "offer_ptr", "offer_merchant", "offer_amount", "merch_row"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    lines = np.diff(a.line_ptr)
    assert lines.min() >= MIN_LINES and lines.max() <= MAX_LINES
    assert np.diff(a.merch_ptr).max() <= MAX_MARKET
    assert (np.diff(a.offer_ptr) >= 1).all() and np.diff(a.offer_ptr).max() <= 8
    part = take_carts(a, np.array([4, 2]))
    np.testing.assert_array_equal(np.diff(part.line_ptr), lines[[4, 2]])
    o0, o1 = a.offer_ptr[a.line_ptr[4]], a.offer_ptr[a.line_ptr[5]]
    np.testing.assert_array_equal(part.offer_amount[: o1 - o0], a.offer_amount[o0:o1])
