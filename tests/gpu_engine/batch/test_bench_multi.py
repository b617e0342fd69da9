"""``python -m gpu_engine bench --suite batch_multi`` at a tiny size (no GPU here: the CPU twin
solves each share in its own thread): a row per GPU count, answers equal to one device's; the
full-search split suite says it skipped."""

import json
import subprocess
import sys

import pytest

from gpu_engine.bench.batch_multi import gpu_counts


def test_gpu_counts_are_powers_of_two_and_all():
    assert gpu_counts(1) == [1]
    assert gpu_counts(2) == [1, 2]
    assert gpu_counts(4) == [1, 2, 4]
    assert gpu_counts(6) == [1, 2, 4, 6]
    assert gpu_counts(4, "1,3,9") == [1, 3, 4]


@pytest.mark.slow
def test_batch_multi_suite_runs_and_every_count_agrees(tmp_path):
    path = tmp_path / "rows.json"
    args = ["--batch-devices", "0,0,1", "--batch-multi-sizes", "400", "--batch-multi-repeats", "1"]
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "gpu_engine",
            "bench",
            "--suite",
            "batch_multi",
            "--suite",
            "full_multi",
            *args,
            "--json",
            path,
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    rows = json.loads(path.read_text())
    multi = [r for r in rows if r["suite"] == "batch_multi"]
    assert [r["gpus"] for r in multi] == [1, 2, 3]
    assert all(r["same_totals_as_1gpu"] and r["same_choices_as_1gpu"] for r in multi)
    assert [sum(int(v) for v in r["share_carts"].split("/")) for r in multi] == [400] * 3
    assert "cpu twin" in multi[0]["share_solver"]
    assert [r["suite"] for r in rows if "error" in r] == ["full_multi"]
