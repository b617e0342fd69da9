"""``python -m gpu_engine bench --suite batch`` at a tiny size: every row present and the
checked sample agrees with the per-cart exact DP."""

import json
import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow


def test_batch_suite_runs_and_its_sample_agrees(tmp_path):
    path = tmp_path / "rows.json"
    args = ["--batch-sizes", "300", "--batch-loop-sample", "4", "--batch-repeats", "1"]
    done = subprocess.run(
        [sys.executable, "-m", "gpu_engine", "bench", "--suite", "batch", *args, "--json", path],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    rows = {row["solver"]: row for row in json.loads(path.read_text())}
    assert rows["cpu-twin"]["full"] + rows["cpu-twin"]["dp"] == 300
    assert "EXTRAPOLATED" in rows["per-cart planner loop"]["note"]
    check = rows["check vs per-cart exact DP"]
    assert check["checked"] == 3 and check["all_agree"]
