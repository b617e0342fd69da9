import json
import subprocess
import sys

import pytest

from gpu_engine import WARMUP_CART as _TINY
from gpu_engine.bench import discover_suites
from gpu_engine.cli import format_table

pytestmark = pytest.mark.slow


def _run(*args, stdin=None):
    return subprocess.run(
        [sys.executable, "-m", "gpu_engine", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_solve_prints_solution_json(tmp_path):
    # All three lines at m1: 7495 of goods, 5% off for 6 units (374), free shipping over 50.
    path = tmp_path / "cart.json"
    path.write_text(json.dumps(_TINY))
    done = _run("solve", str(path), "--algorithm", "dp")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["total"] == 7121 and data["optimal"] and data["algorithm"] == "dp"
    assert set(data["assignment"]) == {"a", "b", "c"}


def test_solve_reads_stdin():
    done = _run("solve", "-", "--algorithm", "cpu-full", stdin=json.dumps(_TINY))
    assert done.returncode == 0 and json.loads(done.stdout)["total"] == 7121


def test_solve_reads_version_2_and_prints_nodes_and_parcels():
    from gpu_engine.reference import reference_brute_force_v2
    from gpu_engine.warmup import WARMUP_CART_V2

    done = _run("solve", "-", stdin=json.dumps(WARMUP_CART_V2))
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["total"] == reference_brute_force_v2(WARMUP_CART_V2)[0]
    assert data["optimal"]
    assert set(data["nodes"]) == {"a", "b", "c"}
    parcels = [p for merchant in data["breakdown"] for p in merchant["parcels"]]
    assert sum(p["units"] for p in parcels) == 4
    shipping = sum(merchant["shipping"] for merchant in data["breakdown"])
    assert shipping == sum(p["fee"] for p in parcels)


def test_bad_input_exits_nonzero_with_message_and_no_traceback(tmp_path):
    bad = dict(_TINY, offers=[dict(_TINY["offers"][0], price=-5)])
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(bad))
    done = _run("solve", str(path))
    assert done.returncode == 2
    assert "offers[0].price" in done.stderr and "-5" in done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""
    missing = _run("solve", str(tmp_path / "nope.json"))
    assert missing.returncode == 2 and "Traceback" not in missing.stderr
    garbage = _run("solve", "-", stdin="{not json")
    assert garbage.returncode == 2 and "Traceback" not in garbage.stderr


def test_suites_are_discovered():
    suites = discover_suites()
    assert {"full_search", "seed_cart", "subset_dp"} <= set(suites)
    done = _run("bench", "--list")
    assert done.returncode == 0 and "seed_cart" in done.stdout


def test_bench_runs_a_suite():
    done = _run(
        "bench",
        "--suite",
        "seed_cart",
        "--seed-cart-seeds",
        "1",
        "--seed-cart-repeats",
        "3",
        "--seed-cart-no-peers",
    )
    assert done.returncode == 0, done.stderr
    assert "seed-1" in done.stdout and "relaxed-partition" in done.stdout


def test_format_table_aligns_union_of_columns():
    table = format_table([{"a": 1, "b": 2.5}, {"a": 10, "c": "x"}]).splitlines()
    assert table[0].split() == ["a", "b", "c"]
    assert len(table) == 4


def test_calibrate_writes_a_profile_the_planner_loads(tmp_path):
    from gpu_engine.planning.profile import read_profile

    out = tmp_path / "profile.json"
    done = _run("calibrate", "--quick", "--out", str(out))
    assert done.returncode == 0, done.stderr
    data = json.loads(out.read_text())
    assert data["source"] == "calibrated" and data["cpu_full_rate"] > 0
    assert read_profile(out).cpu_full_rate == data["cpu_full_rate"]


def test_the_ga_reference_cross_check_agrees_on_small_carts():
    from gpu_engine.bench.ga_check import _compare

    done = _run(
        "bench",
        "--suite",
        "ga_check",
        "--ga-check-sizes",
        "4",
        "--ga-check-carts",
        "2",
        "--ga-check-solvers",
        "highs",
        "--ga-check-workers",
        "2",
    )
    assert done.returncode == 0, done.stderr
    row = next(line.split() for line in done.stdout.splitlines() if line.startswith("ga_check"))
    assert "peers.build_model" in done.stdout
    # agree, disagree, beats a proven optimum, not both proven: both carts agree.
    assert row[-5:-1] == ["2", "0", "0", "0"]
    engine = {"total": 100, "proven": True}
    assert _compare(engine, {"total": 100, "optimal": True}) == "agree"
    assert _compare(engine, {"total": 101, "optimal": True}) == "disagree"
    assert _compare(engine, {"total": 99, "optimal": False}) == "peer_beats_proven"
    assert _compare({"total": 99, "proven": False}, {"total": 100, "optimal": True}) == (
        "engine_beats_proven"
    )
    assert _compare(engine, {"error": "not installed"}) == "peer_no_answer"


def test_fuzz_prints_counts_and_exits_zero_when_clean(tmp_path):
    out = tmp_path / "fuzz.json"
    args = ["--carts", "2", "--routes", "dp,cpu-full", "--budgets-ms", "none", "--json", str(out)]
    done = _run("fuzz", *args)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "wrong_pf" in done.stdout and "2 carts in" in done.stdout
    rows = json.loads(out.read_text())["rows"]
    assert [(r["route"], r["ok"]) for r in rows] == [("dp", 2), ("cpu-full", 2)]


def test_fuzz_exits_nonzero_on_a_crash_and_names_the_cart():
    done = _run("fuzz", "--carts", "1", "--routes", "fault-segv", "--budgets-ms", "none")
    assert done.returncode == 1
    assert "killed by SIGSEGV" in done.stdout and "--seed 0 --first 0 --carts 1" in done.stdout


def test_fuzz_refuses_an_unknown_route():
    done = _run("fuzz", "--routes", "nope")
    assert done.returncode == 2 and "unknown route" in done.stderr
