#!/usr/bin/env bash
# Issue 4's planner budget on the lent GPU, one call: environment facts, the gpu-marked GA
# tests, then the planner suite at 200 and 1000 ms (200 mixed carts, packaged profile) to
# measure the MILP proof's hard deadline. Logs, JSON and a table land in $OUT.
# Run through the device tool from the repository root with carry [".whl"]; the command starts
# with the wheel install and PYTHONPATH export (the image's NumPy 2.5 breaks numba-cuda).
# Locally (CPU, simulator): DRY_RUN=1 runs every phase at tiny sizes.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:-/tmp/device_planner_out}"
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1
export GPU_ENGINE_PROFILE="${GPU_ENGINE_PROFILE:-$PWD/gpu_engine/default_profile.json}"
PY="${PY:-python3}"
TOTAL_S="${TOTAL_S:-385}"
RESERVE_S=8
LOG="$OUT/log.txt"
: >"$LOG"

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

{
    date -u +%Y-%m-%dT%H:%M:%SZ
    git log -1 --format='commit %h %s' 2>/dev/null || true
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm \
        --format=csv 2>/dev/null || echo "no nvidia-smi"
    "$PY" -c 'import sys, numpy, numba, numba_cuda, highspy; print(sys.version.split()[0], "numpy", numpy.__version__, "numba", numba.__version__, "numba-cuda", numba_cuda.__version__)'
    echo "cpus: $(nproc) $(lscpu | sed -n 's/^Model name: *//p')"
    echo "profile: $GPU_ENGINE_PROFILE"
} 2>&1 | tee "$OUT/env.txt"

phase() {  # phase NAME CAP_S CMD...: run within min(CAP_S, time left), log exit code and seconds
    local name=$1 cap=$2 t0=$SECONDS left
    shift 2
    left=$((TOTAL_S - RESERVE_S - SECONDS))
    [ "$left" -lt "$cap" ] && cap=$left
    if [ "$cap" -lt 15 ]; then
        echo "=== $name skipped: ${left} s left" | tee -a "$LOG"
        return
    fi
    echo "=== $name (limit $cap s)" | tee -a "$LOG"
    timeout "$cap" "$@" 2>&1 | tee -a "$LOG"
    echo "=== $name exit ${PIPESTATUS[0]} after $((SECONDS - t0)) s" | tee -a "$LOG"
}

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
