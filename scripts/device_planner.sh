#!/usr/bin/env bash
# Issue 4's planner budget on the lent GPU, one call: environment facts, the gpu-marked GA
# tests, then the planner suite at 200 and 1000 ms (200 mixed carts, packaged profile) to
# measure the MILP proof's hard deadline. Logs, JSON and a table land in $OUT.
# Run through the device tool from the repository root with carry [".whl"]; the command starts
# with the wheel install and PYTHONPATH export (the image's NumPy 2.5 breaks numba-cuda).
# Locally (CPU, simulator): DRY_RUN=1 runs every phase at tiny sizes.
set -uo pipefail
OUT="${OUT:-/tmp/device_planner_out}"
TOTAL_S="${TOTAL_S:-385}"
RESERVE_S=8
# shellcheck source=scripts/device_common.sh
source "$(dirname "$0")/device_common.sh"

if [ "${DRY_RUN:-0}" = 1 ]; then
    PLANNER_ARGS="--planner-carts 4 --planner-workers 1"
    BUDGETS="50,80"
    export NUMBA_ENABLE_CUDASIM=1
else
    export SMARTCART_REAL_GPU=1
    unset NUMBA_ENABLE_CUDASIM
    PLANNER_ARGS=""
    BUDGETS="200,1000"
fi

env_report

phase tests "${TEST_CAP:-70}" "$PY" -m pytest -m gpu -q -p no:cacheprovider -p no:django \
    tests/gpu_engine/test_ga_cuda.py
for budget in ${BUDGETS//,/ }; do
    # shellcheck disable=SC2086
    phase "planner_$budget" "${PLANNER_CAP:-150}" "$PY" -m gpu_engine bench --suite planner \
        --planner-budget-ms "$budget" --planner-detail "$OUT/planner_detail_$budget.json" \
        --json "$OUT/planner_$budget.json" $PLANNER_ARGS
done

"$PY" - "$OUT" <<'PYEOF' 2>&1 | tee "$OUT/table.txt"
import json, pathlib, re, sys

out = pathlib.Path(sys.argv[1])
log = (out / "log.txt").read_text()
for line in log.splitlines():
    if line.startswith("=== ") and (" exit " in line or "skipped" in line):
        print(line)
tests = re.findall(r"^(?:=+ )?[0-9]+ (?:passed|failed|skipped|error).* in [0-9.]+s.*$", log, re.M)
print("pytest -m gpu:", tests[0] if tests else "no summary line")
print("| B | over 1.1xB | worst/B | p95 ms | exact fits | exact answered | proofs cut | methods |")
for path in sorted(out.glob("planner_[0-9]*.json")):
    for row in json.loads(path.read_text()):
        if row.get("suite") == "planner" and "budget_ms" in row:
            print(f"| {row['budget_ms']} | {row['over_1.1x_budget']} | "
                  f"{row['max_wall_over_budget']} | {row['p95_wall_ms']} | {row['exact_fits']} | "
                  f"{row['exact_answered']} | {row['proofs_cut']} | {row['methods']} |")
for path in sorted(out.glob("planner_detail_*.json")):
    for budget, records in json.loads(path.read_text())["budgets"].items():
        worst = sorted(records, key=lambda r: -r["wall_ms"])[:5]
        print(f"B={budget} slowest:", [(r["cart"], r["method"], round(r["wall_ms"], 1),
              (r.get("proof") or {}).get("highs_status")) for r in worst])
        proofs = [r["proof"] for r in records if (r.get("proof") or {}).get("attempted")]
        print(f"B={budget} proofs (left, build, elapsed ms, status):", [(round(p["left_ms"]),
              round(p["build_ms"], 1), round(p["elapsed_ms"], 1), p["highs_status"])
              for p in proofs])
PYEOF
